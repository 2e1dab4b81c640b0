/// <reference path="../../fixture-context.d.ts" />
import { mkdtempSync } from "node:fs";
import { readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { startDevTeamServer } from "../oauth/dev-team-server";
import { publishHandoff, type SetupHandoff } from "./setup-handoff";
import { SHARED_DEV_MARKER, SHARED_TEAM_MARKER, type SharedTeamServerInfo, type SharedWranglerDevInfo } from "./shared-wrangler-dev-info";
import { buildWorkerBundle, usePrebuiltWorker, type WorkerBundle } from "./worker-bundle";
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

/** Something the setup started in the background, published under `handoff` once ready. */
interface Started {
  handoff: SetupHandoff;
  /** Settles once the work has settled and its outcome is published. */
  published: Promise<void>;
  stop(): Promise<void>;
}

/** What the e2e and e2e-timed projects' setups share: one bundle, one server per configuration. */
interface RunState {
  dir: string;
  bundle: Started;
  entry: () => Promise<string>;
  servers: Map<string, Started>;
  /** Setups whose teardown has not run yet: the last one stops everything. */
  users: number;
}

// Both projects' setups run in vitest's main process, each with its own copy of this module.
const STATE = Symbol.for("slipsnisse.e2e-global-setup");
const holder = globalThis as { [STATE]?: RunState };

function inBackground<T>(dir: string, name: string, work: Promise<T>, publish: (value: T) => unknown, stop: (value: T) => Promise<void>): Started {
  const handoff = { file: join(dir, `${name}.json`) };
  const published = publishHandoff(handoff, work.then(publish)).catch((error: unknown) => {
    console.error(`e2e global setup: could not publish ${name}:`, error);
  });
  return {
    handoff,
    published,
    stop: async () => {
      await published;
      const value = await work.catch(() => undefined);
      if (value !== undefined) await stop(value);
    },
  };
}

function runState(): RunState {
  const existing = holder[STATE];
  if (existing) return existing;
  const dir = mkdtempSync(join(tmpdir(), "slipsnisse-e2e-setup-"));
  const build = buildWorkerBundle();
  const bundle = inBackground<WorkerBundle>(
    dir,
    "worker-bundle",
    build,
    (built) => built.entry,
    (built) => built.remove(),
  );
  const state: RunState = { dir, bundle, entry: () => build.then((built) => built.entry), servers: new Map(), users: 0 };
  holder[STATE] = state;
  return state;
}

function startSharedDev(dir: string): Started {
  const log = join(dir, "shared-dev.log");
  return inBackground(
    dir,
    "shared-dev",
    startWranglerDev({ logFile: log, readyTimeoutMs: 120_000 }),
    (dev) => info(dev, log),
    (dev) => dev.stop(),
  );
}

function startSharedTeam(dir: string): Started {
  const log = join(dir, "shared-team.log");
  return inBackground(
    dir,
    "shared-team",
    startDevTeamServer({}, {}, { logFile: log, readyTimeoutMs: 120_000 }),
    (team): SharedTeamServerInfo => ({ ...info(team.dev, log), adminToken: team.adminToken }),
    (team) => team.stop(),
  );
}

/**
 * Runs in Node before the e2e files: instead of one `wrangler dev` per file, one per
 * configuration that several files use, each started only if a selected file uses it:
 * `sharedWranglerDev()` (default vars: AUTH none) and `sharedDevTeamServer()` (OAuth with the dev
 * identity provider, alice and bob). Files on them keep to their own skill names. Every wrangler
 * dev of the run, shared or a file's own, starts from one Worker bundle built here.
 *
 * Vitest runs every project's global setup before the run's first file, so this returns at once
 * and the bundle and servers come up in the background while the workerd files run; the e2e
 * files wait for what they use (setup-handoff.ts). The e2e-timed project's setup, in the same
 * process, reuses what the e2e project's started.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const wanted = await markersInSelectedFiles(project);
  const state = runState();
  state.users += 1;
  // This process's own wrangler dev starts (the shared servers) wait for the bundle too.
  usePrebuiltWorker(state.entry);
  project.provide("e2eWorkerBundle", state.bundle.handoff);
  const shared = (name: string, start: (dir: string) => Started): SetupHandoff => {
    let started = state.servers.get(name);
    if (started === undefined) {
      started = start(state.dir);
      state.servers.set(name, started);
    }
    return started.handoff;
  };
  if (wanted.has(SHARED_DEV_MARKER)) project.provide("sharedWranglerDev", shared("dev", startSharedDev));
  if (wanted.has(SHARED_TEAM_MARKER)) project.provide("sharedDevTeamServer", shared("team", startSharedTeam));
  return async () => {
    state.users -= 1;
    if (state.users > 0) return;
    delete holder[STATE];
    await Promise.allSettled([...state.servers.values()].map((started) => started.stop()));
    await state.bundle.stop();
    await rm(state.dir, { recursive: true, force: true });
  };
}
