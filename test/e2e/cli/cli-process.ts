import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { spawnBounded } from "../harness/spawn-bounded";

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
export async function runCliProcess(
  args: readonly string[],
  { cwd, env = {}, timeoutMs = 60_000 }: { cwd: string; env?: Record<string, string>; timeoutMs?: number },
): Promise<CliResult> {
  const { code, stdout, stderr } = await spawnBounded(cliNode, [cliPath, ...args], {
    cwd,
    env: { ...process.env, ...env },
    timeoutMs,
    label: `slipsnisse ${args.join(" ")}`,
  });
  return { code, stdout, stderr };
}

const quoted = (arg: string) => `'${arg.replaceAll("'", `'\\''`)}'`;

/**
 * Runs `slipsnisse <args>` on a terminal of its own (util-linux `script` gives it a pty, so
 * stdin and stdout are TTYs, as for a person at a shell) and types `answer` once it asks a
 * `[y/N]` question. Bounded in time; everything `script` started is killed on a timeout.
 */
export async function runCliOnTerminal(
  args: readonly string[],
  { cwd, env = {}, answer, timeoutMs = 60_000 }: { cwd: string; env?: Record<string, string>; answer: string; timeoutMs?: number },
): Promise<{ code: number | null; output: string; asked: boolean }> {
  const command = [cliNode, cliPath, ...args].map(quoted).join(" ");
  let asked = false;
  const { code, output } = await spawnBounded("script", ["-qec", command, "/dev/null"], {
    cwd,
    env: { ...process.env, ...env },
    timeoutMs,
    label: `slipsnisse ${args.join(" ")} on a terminal`,
    onOutput: (text, write) => {
      if (asked || !text.includes("[y/N]")) return;
      asked = true;
      write(answer);
    },
  });
  return { code, output: output.replaceAll("\r\n", "\n"), asked };
}
