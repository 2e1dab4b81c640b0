import { tmpdir } from "node:os";
import { join } from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

// Node's on-disk cache of compiled code, for every Node process the run starts (vitest's
// workers, and the e2e files' wrangler, CLI and MCP client processes): each wrangler dev start
// compiles wrangler's 15 MB CLI again without it (docs/testing.md#what-the-suite-costs).
process.env.NODE_COMPILE_CACHE ??= join(tmpdir(), "slipsnisse-node-compile-cache");

// "workers" and "workers-isolated" run inside workerd with the real bindings; "unit" runs pure
// modules in Node; "e2e" runs in Node and drives `wrangler dev --local` from outside with real MCP
// clients and loopback fake servers.

/**
 * workerd test files that read state all files write (the dashboard overview's top experts of
 * the day, the skills page that lists every skill), or change the schema under every file: each
 * runs in a workerd of its own with fresh storage. On the shared storage they failed depending on which files ran before them.
 */
const NEEDS_FRESH_STORAGE = [
  "test/dashboard/run-pages.test.ts",
  "test/dashboard/skills-page.test.ts",
  "test/dashboard/dashboard-access.test.ts",
  // The tenant's one live feed keeps the last 20 runs that ended: other files' sessions publish
  // theirs late (waitUntil, in batches) and pushed this file's runs out of the list.
  "test/dashboard/live-socket.test.ts",
  // Drops and recreates run_index (a deployment without one): on shared storage the files after it
  // met a table without the newer migrations' columns.
  "test/experts/session/retention-sweep.test.ts",
];

/**
 * e2e files that time what they test (a cancel reaching the run within a second, a slow
 * downstream cut at its timeout, 100 concurrent calls within a bound, a dropped stream resumed
 * within its grace): they run last, one at a time, alone on the cores. The other e2e files run
 * two at a time: most of their time is waiting on wrangler dev, Chromium and loopback servers.
 */
const E2E_TIMED = [
  "test/e2e/faults/progress-and-cancellation.e2e.test.ts",
  "test/e2e/faults/downstream-faults.e2e.test.ts",
  "test/e2e/faults/model-faults.e2e.test.ts",
  "test/e2e/load/concurrent-users.e2e.test.ts",
  "test/e2e/resumable-stream.e2e.test.ts",
  // Calls cut by a restart must end within the expert's budget, not at the client's timeout.
  "test/e2e/restart-in-flight.e2e.test.ts",
];

const e2eTest = {
  environment: "node" as const,
  // One shared wrangler dev (and one OAuth team server) for the files that need no configuration of their own.
  globalSetup: ["./test/e2e/harness/e2e-global-setup.ts"],
  // Starts every wrangler dev from the bundle the global setup built once.
  setupFiles: ["./test/e2e/harness/e2e-setup.ts"],
  testTimeout: 120_000,
  hookTimeout: 120_000,
};

const workerdTest = {
  setupFiles: ["./test/apply-migrations.ts", "./test/hold-run-index-flush.ts"],
  globalSetup: ["./test/fixtures/workers-global-setup.ts"],
  // Vitest's console capture writes each line to a stream that reaches the runner by I/O. A line a
  // Durable Object writes after its test file ended (a session's alarm flushing the run index
  // logs its runs) then waits forever, and the run never exits: the same teardown hang as
  // workers-sdk#14180. Lines go to workerd's own output instead; tests that read log lines spy
  // on `console` itself.
  disableConsoleIntercept: true,
};

export default defineConfig(async () => {
  const migrations = await readD1Migrations("./migrations");
  const workerdPlugin = () =>
    cloudflareTest({
      wrangler: { configPath: "./wrangler.toml" },
      // The [ai] binding would otherwise ask for a remote proxy (and an API token).
      remoteBindings: false,
      miniflare: {
        bindings: {
          TEST_MIGRATIONS: migrations,
          ENVIRONMENT: "test",
          AUTH: "none",
          FIXTURE_TOKEN: "tok-fixture-5ecr3t-77",
          FIXTURE_MODEL_KEY: "mdlkey-fixture-9d2f41",
          // Seals connection tokens at rest (src/downstream/connections/token-cipher.ts).
          CONNECTIONS_KEY: "test-connections-key-0123456789abcdef",
          // A pre-registered OAuth client (test/downstream/connections/client-issuer-pin.test.ts):
          // characters that make every encoding of the secret differ from the others.
          PIN_CLIENT_ID: "pin client/1",
          PIN_CLIENT_SECRET: "pin s3cr/t+x!~(7)'q",
        },
      },
    });
  return {
    test: {
      // Two at once for the workerd and unit files (most of a file's time is workerd's start, not
      // CPU: 9.3 → 7.0 min for them on 2 cores); e2e runs after them, its wrangler dev processes
      // never sharing the cores with workerd tests, and the timed e2e files last, one at a time.
      maxWorkers: 2,
      projects: [
        {
          plugins: [workerdPlugin()],
          test: {
            name: "workers",
            include: ["test/**/*.test.ts"],
            exclude: ["test/e2e/**", "test/unit/**", ...NEEDS_FRESH_STORAGE],
            // One workerd per vitest worker for all its files, instead of one per file: starting
            // workerd and fetching the module graph into it was most of every file's time
            // (docs/platform-notes.md#tests-inside-workerd). Files share D1, KV and Durable Objects,
            // so each keeps to its own names (uniqueSkill).
            isolate: false,
            ...workerdTest,
          },
        },
        {
          plugins: [workerdPlugin()],
          test: { name: "workers-isolated", include: [...NEEDS_FRESH_STORAGE], ...workerdTest },
        },
        {
          test: {
            name: "unit",
            include: ["test/unit/**/*.test.ts"],
            environment: "node",
            // Pure modules: one Node worker for many files instead of one per file (about 0.4 s of
            // CPU each, vitest's own count).
            isolate: false,
          },
        },
        {
          test: {
            name: "e2e",
            sequence: { groupOrder: 1 },
            include: ["test/e2e/**/*.e2e.test.ts"],
            exclude: E2E_TIMED,
            // Each file starts its servers in its own hooks and stops them in its own afterAll, so a
            // worker can run file after file. The cores are saturated during e2e (vmstat: 0% idle),
            // so a fresh worker per file (about 0.4 s of CPU each) was time every file waited for.
            isolate: false,
            ...e2eTest,
          },
        },
        {
          test: { name: "e2e-timed", sequence: { groupOrder: 2 }, include: E2E_TIMED, fileParallelism: false, ...e2eTest },
        },
      ],
    },
  };
});
