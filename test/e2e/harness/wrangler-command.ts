import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

export const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
export const wranglerCli = fileURLToPath(
  new URL("../../../node_modules/wrangler/wrangler-dist/cli.js", import.meta.url),
);

/** With these and `--local`, wrangler makes no outbound connection (docs/platform-notes.md#wrangler-offline). */
export function offlineWranglerEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    WRANGLER_SEND_METRICS: "false",
    WRANGLER_SEND_ERROR_REPORTS: "false",
    CLOUDFLARE_CF_FETCH_ENABLED: "false",
    WRANGLER_HIDE_BANNER: "true",
    // Non-interactive: no prompts, no interactive dev session UI.
    CI: "true",
    ...extra,
  };
}

/**
 * Arguments that run wrangler's CLI under this very Node (npm's Node 24): the system Node 20
 * on PATH would be refused by wrangler.
 */
export function wranglerArgv(args: readonly string[]): string[] {
  return ["--no-warnings", wranglerCli, ...args];
}

export interface CommandResult {
  code: number | null;
  output: string;
}

/** Runs a one-shot wrangler command (migrations, dry-run deploy) to completion, bounded in time. */
export async function runWrangler(
  args: readonly string[],
  { cwd = repoRoot, timeoutMs = 60_000 }: { cwd?: string; timeoutMs?: number } = {},
): Promise<CommandResult> {
  const child = spawn(process.execPath, wranglerArgv(args), {
    cwd,
    env: offlineWranglerEnv(),
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      reject(new Error(`wrangler ${args.join(" ")} took over ${timeoutMs} ms:\n${output.slice(-2000)}`));
    }, timeoutMs);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}
