import { spawn } from "node:child_process";

export interface BoundedRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout and stderr interleaved as they arrived. */
  output: string;
}

export interface SpawnBoundedOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  timeoutMs: number;
  /** Names the command in the timeout error, e.g. "wrangler d1 migrations apply". */
  label: string;
  /**
   * For a command that asks questions: called with the output so far after each chunk, and a
   * writer to the command's stdin (closed at once when this is not given).
   */
  onOutput?: (output: string, write: (text: string) => void) => void;
}

/**
 * Runs a one-shot command to completion: spawns it in its own process group (detached, so a
 * timeout kills everything it started, not only the direct child), collects its output, and
 * rejects with the output's tail when it runs past `timeoutMs`. The bound turns a hang into a
 * failure that names the command; a passing test never depends on it.
 */
export function spawnBounded(command: string, args: readonly string[], { cwd, env, timeoutMs, label, onOutput }: SpawnBoundedOptions): Promise<BoundedRun> {
  const child = spawn(command, args, { cwd, env, stdio: ["pipe", "pipe", "pipe"], detached: true });
  // A command that is asked nothing reads end-of-file at once, as from /dev/null.
  if (onOutput === undefined) child.stdin.end();
  const write = (text: string) => child.stdin.write(text);
  let stdout = "";
  let stderr = "";
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => {
    const text = chunk.toString("utf8");
    stdout += text;
    output += text;
    onOutput?.(output, write);
  });
  child.stderr.on("data", (chunk: Buffer) => {
    const text = chunk.toString("utf8");
    stderr += text;
    output += text;
    onOutput?.(output, write);
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch (error) {
        // ESRCH: the group ended between the timeout firing and the kill.
        if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
      }
      reject(new Error(`${label} took over ${timeoutMs} ms:\n${output.slice(-3000)}`));
    }, timeoutMs);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      child.stdin.end();
      resolve({ code, stdout, stderr, output });
    });
  });
}
