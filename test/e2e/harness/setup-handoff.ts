import { existsSync } from "node:fs";
import { readFile, rename, writeFile } from "node:fs/promises";
import type { SetupHandoff } from "./shared-wrangler-dev-info";

export type { SetupHandoff };

type Outcome<T> = { value: T } | { error: string };

/**
 * Writes what `work` gives (or how it failed) to `handoff.file` once it settles, whole or not at
 * all (a rename), for test workers waiting in `awaitHandoff`. Vitest runs every project's global
 * setup before the first test file of the run: a setup that returns at once and finishes its
 * slow work here lets that work overlap the files that run before the e2e files.
 */
export async function publishHandoff<T>(handoff: SetupHandoff, work: Promise<T>): Promise<void> {
  const outcome: Outcome<T> = await work.then(
    (value) => ({ value }),
    (error: unknown) => ({ error: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
  );
  const staging = `${handoff.file}.partial`;
  await writeFile(staging, JSON.stringify(outcome));
  await rename(staging, handoff.file);
}

/**
 * What the global setup published under `handoff`, once it is there; throws the setup's own
 * error if that work failed. Bounded: a setup that neither finished nor failed within
 * `timeoutMs` is a failure naming `what`.
 */
export async function awaitHandoff<T>(handoff: SetupHandoff, what: string, timeoutMs = 240_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (!existsSync(handoff.file)) {
    if (Date.now() > deadline) {
      throw new Error(`${what} was not ready within ${timeoutMs} ms of this file asking for it (the e2e global setup writes ${handoff.file})`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const outcome = JSON.parse(await readFile(handoff.file, "utf8")) as Outcome<T>;
  if ("error" in outcome) throw new Error(`${what} failed in the e2e global setup:\n${outcome.error}`);
  return outcome.value;
}
