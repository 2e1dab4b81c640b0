import type { CatalogInput } from "../../../src/catalog/catalog-schema";
import { startFixtureServers, type RunningFixtureServers } from "../../fixtures/fixture-servers";
import { taggedBase } from "../../fixtures/fixture-stats-client";
import { loadCatalog } from "./catalog-admin";
import { startFakeOpenAI, type FakeOpenAIServer } from "./fake-openai-server";
import { startWranglerDev, type WranglerDev, type WranglerDevOptions } from "./wrangler-dev";

type SkillInput = CatalogInput["skills"][string];
type ServerInput = NonNullable<SkillInput["servers"]>[string];
type ExpertInput = NonNullable<SkillInput["experts"]>[number];

export interface EchoExpertStackOptions {
  /** Tags the echo fixture's calls so files sharing the fixture process never count each other's. */
  tag: string;
  /** The skill's experts, given the fake model and the fixture servers to point at. */
  experts: (fake: FakeOpenAIServer, fixtures: RunningFixtureServers) => ExpertInput[];
  /** The rest of skill `default` (pricing, limits, access, tool policy…). */
  skill?: Omit<SkillInput, "servers" | "experts">;
  /** Server `fx` beyond its URL and transport (headers with secrets, say). */
  server?: Omit<ServerInput, "url" | "transport">;
  wrangler?: WranglerDevOptions;
  /** Headers for the catalog load (a bearer token when OAuth is on). */
  adminHeaders?: Record<string, string>;
}

export interface EchoExpertStack {
  dev: WranglerDev;
  fake: FakeOpenAIServer;
  fixtures: RunningFixtureServers;
  /** The tagged echo fixture's base URL (for its call stats). */
  fxBase: string;
  stop(): Promise<void>;
}

/** An expert on the fake OpenAI-compatible model (most e2e experts); fields given win. */
export function fakeModelExpert(fake: FakeOpenAIServer, expert: Omit<ExpertInput, "provider" | "model"> & Partial<ExpertInput>): ExpertInput {
  return { provider: "openai-compatible", base_url: fake.baseURL, model: "fake-cheap", ...expert };
}

/**
 * The stack most end-to-end tests run on, all real: `wrangler dev` with skill `default`, whose
 * server `fx` is the loopback fixture MCP server (echo, add, whoami…) and whose experts call the
 * scripted fake OpenAI-compatible model on loopback. Everything started is stopped by `stop`,
 * also when starting fails half-way.
 */
export async function startEchoExpertStack(options: EchoExpertStackOptions): Promise<EchoExpertStack> {
  const [fixtures, fake] = await Promise.all([startFixtureServers(), startFakeOpenAI()]);
  let dev: WranglerDev | undefined;
  const stop = async () => {
    await dev?.stop();
    await Promise.allSettled([fake.close(), fixtures.stop()]);
  };
  try {
    const fxBase = taggedBase(fixtures.urls.echo, options.tag);
    dev = await startWranglerDev(options.wrangler);
    await loadCatalog(
      dev.baseUrl,
      {
        skills: {
          default: {
            ...options.skill,
            servers: { fx: { ...options.server, url: `${fxBase}/mcp`, transport: "streamable-http" } },
            experts: options.experts(fake, fixtures),
          },
        },
      },
      options.adminHeaders,
    );
    return { dev, fake, fixtures, fxBase, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
