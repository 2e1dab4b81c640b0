import { fileURLToPath } from "node:url";
import { spawnBounded } from "./spawn-bounded";

export const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
export const wranglerCli = fileURLToPath(new URL("../../../node_modules/wrangler/wrangler-dist/cli.js", import.meta.url));

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
    // wrangler dev's local trace collector (on by default) is a tail worker in the same workerd
    // that stores every invocation's events in a SQLite object: about half of a call's CPU here,
    // and absent in production (docs/platform-notes.md#wrangler-dev-trace-collector). No test
    // reads it; set X_LOCAL_OBSERVABILITY=true to look at the traces of a run.
    X_LOCAL_OBSERVABILITY: process.env.X_LOCAL_OBSERVABILITY ?? "false",
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
  const { code, output } = await spawnBounded(process.execPath, wranglerArgv(args), {
    cwd,
    env: offlineWranglerEnv(),
    timeoutMs,
    label: `wrangler ${args.join(" ")}`,
  });
  return { code, output };
}
