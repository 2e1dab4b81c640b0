import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const cliPath = fileURLToPath(new URL("../../../bin/slipsnisse.mjs", import.meta.url));

/**
 * The system Node (20 on this machine kind) when there is one: the CLI promises to run there
 * without a build step. Otherwise the Node running the tests.
 */
export const cliNode = ["/usr/bin/node", "/usr/local/bin/node"].find((path) => existsSync(path)) ?? process.execPath;

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `slipsnisse <args>` as its own process, bounded in time. */
export function runCliProcess(args: readonly string[], { cwd, env = {}, timeoutMs = 60_000 }: { cwd: string; env?: Record<string, string>; timeoutMs?: number }): Promise<CliResult> {
  const child = spawn(cliNode, [cliPath, ...args], { cwd, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`slipsnisse ${args.join(" ")} took over ${timeoutMs} ms:\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
