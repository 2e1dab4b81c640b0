import { spawn, type ChildProcess } from "node:child_process";
import { freePort } from "./free-port";
import { isLiveProcess, killProcessGroup } from "./process-group";

// The last line of the banner start.mjs prints once the catalog is settled.
const READY = /Claude Code: .*\n/;

export interface NpmStart {
  child: ChildProcess;
  port: number;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  /** Ends it and its wrangler/workerd processes (its own group, then wrangler's). */
  stop(): Promise<void>;
}

const PORT_ATTEMPTS = 3;
const PORT_TAKEN = /Port \d+ on 127\.0\.0\.1 is in use|Address already in use/;

/** npm start found its port taken: freePort's port went to another file's server first (e2e files run two at a time). */
class PortTakenError extends Error {}

/**
 * `npm start` as a user runs it (scripts/start.mjs under the project's Node) in `dir` on a free
 * port (or `port`), resolved once its banner is printed; rejects with the output if it exits or
 * takes over 90 s. A free port another process took before the start is tried again with another.
 * It probes no local model server unless `env` names SLIPSNISSE_DEMO_PROBE_PORTS: the well-known
 * ports (Ollama's, vLLM's, …) may hold anything on a shared machine.
 */
export async function startNpmStart(dir: string, args: readonly string[] = [], env: Record<string, string> = {}, port?: number): Promise<NpmStart> {
  env = { SLIPSNISSE_DEMO_PROBE_PORTS: "", ...env };
  if (port !== undefined) return startOnPort(dir, port, args, env);
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnPort(dir, await freePort(), args, env);
    } catch (error) {
      if (!(error instanceof PortTakenError) || attempt >= PORT_ATTEMPTS) throw error;
    }
  }
}

async function startOnPort(dir: string, port: number, args: readonly string[], env: Record<string, string>): Promise<NpmStart> {
  const child = spawn(process.execPath, ["scripts/start.mjs", ...args], {
    cwd: dir,
    detached: true,
    env: { ...process.env, PORT: String(port), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const stop = async () => {
    if (child.pid !== undefined && isLiveProcess(child.pid)) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      await killProcessGroup(child.pid);
      await exited;
    }
  };
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start was not ready in 90 s:\n${output.slice(-2000)}`)), 90_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (READY.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      const message = `npm start exited early (${code}):\n${output.slice(-2000)}`;
      reject(PORT_TAKEN.test(output) ? new PortTakenError(message) : new Error(message));
    });
  }).catch(async (error: unknown) => {
    await stop();
    throw error;
  });
  return { child, port, output: () => output, stop };
}
