import type { CliIo } from "../../../src/cli/io.mjs";
import { main } from "../../../src/cli/main.mjs";

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs one `slipsnisse` invocation in-process with captured output and the given env/cwd. */
export async function runCli(argv: string[], { env = {}, cwd = process.cwd() }: { env?: Record<string, string>; cwd?: string } = {}): Promise<CliRun> {
  let stdout = "";
  let stderr = "";
  const io: CliIo = {
    stdout: { write: (text) => (stdout += text) },
    stderr: { write: (text) => (stderr += text) },
    env,
    cwd,
  };
  const code = await main(argv, io);
  return { code, stdout, stderr };
}
