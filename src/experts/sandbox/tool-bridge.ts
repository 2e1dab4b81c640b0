import { RpcTarget } from "cloudflare:workers";

/** Runs one tool call for a script: the run's own toolset, so every rule of the tool loop holds. */
export type BridgeCall = (name: string, input: unknown) => Promise<string>;

/** Whether the bridge still serves calls; held by the host only, never handed to the sandbox. */
export interface BridgeGate {
  open: boolean;
}

/** What a call answers over the bridge: JSON, so nothing but data crosses back into the sandbox. */
export type BridgeAnswer = { ok: true; result: string } | { ok: false; error: string };

/**
 * The sandbox's only way out: an RpcTarget passed to the loaded worker's entrypoint, whose one
 * method runs a tool through `call`. It carries no identity the script could change: the user,
 * skill and toolset are fixed in `call` by the run that made the bridge. Once the script has
 * ended (or the run was cut off), `gate.open` is false and late calls are refused.
 */
export class ToolBridge extends RpcTarget {
  readonly #call: BridgeCall;
  readonly #gate: BridgeGate;

  constructor(call: BridgeCall, gate: BridgeGate) {
    super();
    this.#call = call;
    this.#gate = gate;
  }

  async call(name: unknown, argsJson: unknown): Promise<string> {
    if (!this.#gate.open) return answer({ ok: false, error: "the script has ended; a late tool call is not run" });
    if (typeof name !== "string" || typeof argsJson !== "string") return answer({ ok: false, error: "a tool is called as tools.<name>({ ...arguments })" });
    let input: unknown;
    try {
      input = JSON.parse(argsJson);
    } catch {
      return answer({ ok: false, error: `the arguments of ${name} are not JSON` });
    }
    try {
      return answer({ ok: true, result: await this.#call(name, input) });
    } catch (error) {
      return answer({ ok: false, error: error instanceof Error ? error.message : String(error) });
    }
  }
}

function answer(value: BridgeAnswer): string {
  return JSON.stringify(value);
}
