/// <reference path="../../fixture-context.d.ts" />
import { readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { SHARED_DEV_MARKER } from "./shared-wrangler-dev-info";
import { startWranglerDev } from "./wrangler-dev";

/** Whether any e2e file selected for this run (CLI filters included) runs on the shared server. */
async function sharedServerWanted(project: TestProject): Promise<boolean> {
  const { testFiles } = await project.globTestFiles(project.vitest.config.filters);
  for (const file of testFiles) {
    if ((await readFile(file, "utf8")).includes(SHARED_DEV_MARKER)) return true;
  }
  return false;
}

/**
 * Runs in Node before the e2e files: one `wrangler dev --local` with the default vars, shared by
 * every file that calls `sharedWranglerDev()` (each under its own skill names), instead of one
 * start per file. Started only if a selected file uses it.
 */
export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  if (!(await sharedServerWanted(project))) return undefined;
  const logFile = join(tmpdir(), `slipsnisse-shared-dev-${process.pid}-${Date.now()}.log`);
  const dev = await startWranglerDev({ logFile, readyTimeoutMs: 120_000 });
  project.provide("sharedWranglerDev", {
    baseUrl: dev.baseUrl,
    port: dev.port,
    pgid: dev.pgid,
    persistDir: dev.persistDir,
    startupMs: dev.startupMs,
    logFile,
  });
  return async () => {
    await dev.stop();
    await rm(logFile, { force: true });
  };
}
