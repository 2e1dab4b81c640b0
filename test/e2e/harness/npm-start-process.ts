import { spawn, type ChildProcess } from "node:child_process";
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

/**
 * `npm start` as a user runs it (scripts/start.mjs under the project's Node) in `dir`, resolved
 * once its banner is printed; rejects with the output if it exits or takes over 90 s.
 */
export async function startNpmStart(dir: string, port: number, args: readonly string[] = [], env: Record<string, string> = {}): Promise<NpmStart> {
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
      reject(new Error(`npm start exited early (${code}):\n${output.slice(-2000)}`));
    });
  }).catch(async (error: unknown) => {
    await stop();
    throw error;
  });
  return { child, port, output: () => output, stop };
}
