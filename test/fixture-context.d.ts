import type { SetupHandoff } from "./e2e/harness/shared-wrangler-dev-info";
import type { FixtureServerUrls } from "./fixtures/fixture-urls";

declare module "vitest" {
  export interface ProvidedContext {
    /** Loopback fixture MCP servers started by test/fixtures/workers-global-setup.ts. */
    fixtureServers: FixtureServerUrls;
    /** The Worker bundled once for the e2e run's `wrangler dev` starts (test/e2e/harness/worker-bundle.ts). */
    e2eWorkerBundle?: SetupHandoff;
    /** The e2e project's shared `wrangler dev` (test/e2e/harness/e2e-global-setup.ts), if a selected file uses it. */
    sharedWranglerDev?: SetupHandoff;
    /** The e2e project's shared OAuth team server (test/e2e/oauth/dev-team-server.ts), if a selected file uses it. */
    sharedDevTeamServer?: SetupHandoff;
  }
}
