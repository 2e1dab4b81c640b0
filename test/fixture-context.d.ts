import type { FixtureServerUrls } from "./fixtures/fixture-urls";

declare module "vitest" {
  export interface ProvidedContext {
    /** Loopback fixture MCP servers started by test/fixtures/workers-global-setup.ts. */
    fixtureServers: FixtureServerUrls;
  }
}
