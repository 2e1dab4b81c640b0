import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

// Two projects: "workers" runs inside workerd with the real bindings; "e2e" runs in Node and
// drives `wrangler dev --local` from outside with real MCP clients and loopback fake servers.
export default defineConfig(async () => {
  const migrations = await readD1Migrations("./migrations");
  return {
    test: {
      // Two at once for the workerd and unit files (most of a file's time is workerd's start, not
      // CPU: 9.3 → 7.0 min for them on 2 cores); e2e runs after them, one file at a time, so its
      // wrangler dev processes never share the cores with other tests.
      maxWorkers: 2,
      projects: [
        {
          plugins: [
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
                },
              },
            }),
          ],
          test: {
            name: "workers",
            include: ["test/**/*.test.ts"],
            exclude: ["test/e2e/**", "test/unit/**"],
            setupFiles: ["./test/apply-migrations.ts", "./test/hold-run-index-flush.ts"],
            globalSetup: ["./test/fixtures/workers-global-setup.ts"],
          },
        },
        {
          test: {
            name: "unit",
            include: ["test/unit/**/*.test.ts"],
            environment: "node",
          },
        },
        {
          test: {
            name: "e2e",
            sequence: { groupOrder: 1 },
            include: ["test/e2e/**/*.e2e.test.ts"],
            environment: "node",
            // One shared wrangler dev for the files that need no configuration of their own.
            globalSetup: ["./test/e2e/harness/e2e-global-setup.ts"],
            testTimeout: 120_000,
            hookTimeout: 120_000,
            fileParallelism: false,
          },
        },
      ],
    },
  };
});
