import type { SandboxLoader } from "../core/run-types";
import { raceWithSignal } from "../core/abort";
import { scriptLine, scriptWorkerCode } from "./script-module";
import { type BridgeCall, type BridgeGate, ToolBridge } from "./tool-bridge";

export interface ScriptLimits {
  /** CPU the isolate may use (enforced in production; see script-module.ts). */
  cpuMs: number;
  /** Bytes of `console.log` output kept. */
  maxLogBytes: number;
}

/** How a script ended: its return value as text, or its error with the line of the script it came from. */
export type ScriptOutcome =
  | { ok: true; value: string; logs: string[]; elapsedMs: number }
  | { ok: false; error: string; line?: number; logs: string[]; elapsedMs: number };

interface RunnerAnswer {
  ok: boolean;
  value?: unknown;
  error?: unknown;
  stack?: unknown;
  logs?: unknown;
}

interface ScriptEntrypoint {
  run(bridge: ToolBridge, maxLogBytes: number): Promise<RunnerAnswer>;
}

/**
 * Runs one script in a fresh Dynamic Worker (`load`, never `get`: nothing a script leaves in its
 * isolate reaches another script, run or user). Its tool calls go through `call`; the run's
 * signal (its deadline and the caller's cancel) rejects the wait and closes the bridge, so a
 * script that outlives its run cannot call a tool.
 */
export async function runScript(loader: SandboxLoader, script: string, call: BridgeCall, limits: ScriptLimits, signal: AbortSignal): Promise<ScriptOutcome> {
  const started = Date.now();
  const gate: BridgeGate = { open: true };
  const bridge = new ToolBridge(call, gate);
  const worker = loader.load(scriptWorkerCode(script, limits.cpuMs));
  const entrypoint = worker.getEntrypoint() as unknown as ScriptEntrypoint;
  try {
    const answer = await raceWithSignal(entrypoint.run(bridge, limits.maxLogBytes), signal).catch((error: unknown) => {
      if (signal.aborted) throw error;
      // The isolate itself failed: a syntax error at load, a limit the runtime enforces, a crash.
      return { ok: false, error: error instanceof Error ? `${error.name}: ${error.message}` : String(error), stack: error instanceof Error ? error.stack : "" };
    });
    return outcomeOf(answer, Date.now() - started);
  } finally {
    gate.open = false;
    dispose(entrypoint);
    dispose(worker);
  }
}

function outcomeOf(answer: RunnerAnswer, elapsedMs: number): ScriptOutcome {
  const logs = Array.isArray(answer.logs) ? answer.logs.filter((line): line is string => typeof line === "string") : [];
  if (answer.ok) return { ok: true, value: typeof answer.value === "string" ? answer.value : String(answer.value), logs, elapsedMs };
  const error = typeof answer.error === "string" ? answer.error : "the script failed";
  const line = scriptLine(`${typeof answer.stack === "string" ? answer.stack : ""}\n${error}`);
  return { ok: false, error, ...(line === undefined ? {} : { line }), logs, elapsedMs };
}

/** Releases an RPC stub now rather than at garbage collection. */
function dispose(stub: unknown): void {
  try {
    const key: unknown = Reflect.get(Symbol, "dispose");
    const release: unknown = typeof stub === "object" && stub !== null && typeof key === "symbol" ? Reflect.get(stub, key) : undefined;
    if (typeof release === "function") release.call(stub);
  } catch {
    // Already released, or the isolate is gone.
  }
}
