import type { SandboxWorkerCode } from "../core/run-types";
/**
 * The modules of the Dynamic Worker a script runs in. The model's script is the body of an async
 * function in a module of its own (`script.js`, one line of header), so a stack line
 * `script.js:N` is line N - 1 of what the model wrote, and the runner module's names (the
 * bridge among them) are not in the script's scope: it sees only `tools` and `console`.
 */
export const SCRIPT_MODULE = "script.js";
const RUNNER_MODULE = "runner.js";
const SCRIPT_HEADER_LINES = 1;

// Written without the shape of an import line, so no import scan reads it as one of this file's.
const IMPORTS = [`import { WorkerEntrypoint } from ${JSON.stringify("cloudflare:workers")};`, `import script from ${JSON.stringify(`./${SCRIPT_MODULE}`)};`];

const RUNNER_SOURCE = `${IMPORTS.join("\n")}

function text(value) {
  if (typeof value === "string") return value;
  try { return JSON.stringify(value) ?? String(value); } catch { return String(value); }
}

export default class ScriptRunner extends WorkerEntrypoint {
  async run(bridge, maxLogBytes) {
    const logs = [];
    let logBytes = 0;
    const log = (...parts) => {
      if (logBytes >= maxLogBytes) return;
      const line = parts.map(text).join(" ").slice(0, maxLogBytes - logBytes);
      logBytes += line.length;
      logs.push(line);
    };
    const tools = new Proxy(Object.create(null), {
      get(_, name) {
        if (typeof name !== "string" || name === "then") return undefined;
        return async (input) => {
          const answer = JSON.parse(await bridge.call(name, JSON.stringify(input === undefined ? {} : input)));
          if (!answer.ok) throw new Error(answer.error);
          return answer.result;
        };
      },
    });
    const console = Object.freeze({ log, info: log, warn: log, error: log, debug: log });
    try {
      const value = await script(tools, console);
      return { ok: true, value: value === undefined ? "undefined" : text(value), logs };
    } catch (error) {
      const message = error instanceof Error ? error.name + ": " + error.message : "thrown: " + text(error);
      return { ok: false, error: message, stack: error instanceof Error ? String(error.stack ?? "") : "", logs };
    }
  }
}
`;

/** The worker code for `loader.load`: no bindings, no env, no network (`globalOutbound: null`). */
export function scriptWorkerCode(script: string, cpuMs: number): SandboxWorkerCode {
  return {
    compatibilityDate: SANDBOX_COMPATIBILITY_DATE,
    mainModule: RUNNER_MODULE,
    modules: { [RUNNER_MODULE]: RUNNER_SOURCE, [SCRIPT_MODULE]: `export default async function (tools, console) {\n${script}\n}\n` },
    globalOutbound: null,
    // Enforced by Cloudflare; the open-source workerd of `wrangler dev` does not (docs/security.md).
    limits: { cpuMs },
  };
}

/** Within what this workerd accepts (dates up to 2026-10-30), and fixed so scripts behave alike everywhere. */
export const SANDBOX_COMPATIBILITY_DATE = "2026-08-20";

/** The line of the model's script a stack trace points at, if it points into the script. */
export function scriptLine(stack: string): number | undefined {
  const match = new RegExp(`${SCRIPT_MODULE.replace(".", "\\.")}:(\\d+)(?::\\d+)?`).exec(stack);
  if (!match?.[1]) return undefined;
  const line = Number(match[1]) - SCRIPT_HEADER_LINES;
  return line >= 1 ? line : undefined;
}
