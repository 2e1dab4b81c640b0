/// <reference path="../../fixture-context.d.ts" />
import { readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { startDevTeamServer } from "../oauth/dev-team-server";
import { SHARED_DEV_MARKER, SHARED_TEAM_MARKER, type SharedWranglerDevInfo } from "./shared-wrangler-dev-info";
import { buildWorkerBundle, usePrebuiltWorker } from "./worker-bundle";
import { startWranglerDev, type WranglerDev } from "./wrangler-dev";

/** Which shared servers the e2e files selected for this run (CLI filters included) use. */
async function markersInSelectedFiles(project: TestProject): Promise<Set<string>> {
  const { testFiles } = await project.globTestFiles(project.vitest.config.filters);
  const found = new Set<string>();
  for (const file of testFiles) {
    const text = await readFile(file, "utf8");
    for (const marker of [SHARED_DEV_MARKER, SHARED_TEAM_MARKER]) if (text.includes(marker)) found.add(marker);
  }
  return found;
}

function info(dev: WranglerDev, logFile: string): SharedWranglerDevInfo {
  return { baseUrl: dev.baseUrl, port: dev.port, pgid: dev.pgid, persistDir: dev.persistDir, startupMs: dev.startupMs, logFile };
}

/**
 * Runs in Node before the e2e files: instead of one `wrangler dev` per file, one per
 * configuration that several files use, each started only if a selected file uses it:
 * `sharedWranglerDev()` (default vars: AUTH none) and `sharedDevTeamServer()` (OAuth with the dev
 * identity provider, alice and bob). Files on them keep to their own skill names.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const wanted = await markersInSelectedFiles(project);
  const stops: Array<() => Promise<void>> = [];
  const teardown = async () => {
    await Promise.allSettled(stops.map((stop) => stop()));
  };
  const logFile = (name: string) => join(tmpdir(), `slipsnisse-shared-${name}-${process.pid}-${Date.now()}.log`);
  try {
    // Every wrangler dev of the run, shared or a file's own, starts from this one bundle.
    const bundle = await buildWorkerBundle();
    stops.push(bundle.remove);
    usePrebuiltWorker(bundle.entry);
    project.provide("e2eWorkerBundle", bundle.entry);
    await Promise.all([
      (async () => {
        if (!wanted.has(SHARED_DEV_MARKER)) return;
        const log = logFile("dev");
        const dev = await startWranglerDev({ logFile: log, readyTimeoutMs: 120_000 });
        stops.push(async () => {
          await dev.stop();
          await rm(log, { force: true });
        });
        project.provide("sharedWranglerDev", info(dev, log));
      })(),
      (async () => {
        if (!wanted.has(SHARED_TEAM_MARKER)) return;
        const log = logFile("team");
        const team = await startDevTeamServer({}, {}, { logFile: log, readyTimeoutMs: 120_000 });
        stops.push(async () => {
          await team.stop();
          await rm(log, { force: true });
        });
        project.provide("sharedDevTeamServer", { ...info(team.dev, log), adminToken: team.adminToken });
      })(),
    ]);
  } catch (error) {
    await teardown();
    throw error;
  }
  return teardown;
}
