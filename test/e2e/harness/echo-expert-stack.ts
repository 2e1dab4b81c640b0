import type { CatalogInput } from "../../../src/catalog/catalog-schema";
import { startFixtureServers, type RunningFixtureServers } from "../../fixtures/fixture-servers";
import { taggedBase } from "../../fixtures/fixture-stats-client";
import { loadCatalog } from "./catalog-admin";
import { startFakeOpenAI, textReply, toolCallsReply, toolResultMessages, type FakeOpenAIServer } from "./fake-openai-server";
import { pushSharedSkill } from "./shared-wrangler-dev";
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
  /**
   * Run on a server already running (`sharedWranglerDev()`) under this skill name instead of
   * starting one with skill `default`; only this skill is pushed, the server's other skills stay.
   */
  onServer?: { dev: WranglerDev; skill: string };
  /** Headers for the catalog load (a bearer token when OAuth is on). */
  adminHeaders?: Record<string, string>;
}

export interface EchoExpertStack {
  dev: WranglerDev;
  fake: FakeOpenAIServer;
  fixtures: RunningFixtureServers;
  /** The tagged echo fixture's base URL (for its call stats). */
  fxBase: string;
  /** The skill's name (`default` on a server of its own) and its MCP endpoints. */
  skill: string;
  mcpUrl: string;
  sseUrl: string;
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
 * also when starting fails half-way. With `onServer` (usually `sharedWranglerDev()`) the skill is
 * pushed under its own name onto that server instead, and the test reaches it at `mcpUrl`.
 */
export async function startEchoExpertStack(options: EchoExpertStackOptions): Promise<EchoExpertStack> {
  const [fixtures, fake] = await Promise.all([startFixtureServers(), startFakeOpenAI()]);
  // Only a server this stack started is stopped by it.
  let ownDev: WranglerDev | undefined;
  const stop = async () => {
    await ownDev?.stop();
    await Promise.allSettled([fake.close(), fixtures.stop()]);
  };
  try {
    const fxBase = taggedBase(fixtures.urls.echo, options.tag);
    const skill: SkillInput = {
      ...options.skill,
      servers: { fx: { ...options.server, url: `${fxBase}/mcp`, transport: "streamable-http" } },
      experts: options.experts(fake, fixtures),
    };
    if (options.onServer) {
      const { dev } = options.onServer;
      const pushed = await pushSharedSkill(dev, options.onServer.skill, skill, options.adminHeaders);
      return { dev, fake, fixtures, fxBase, skill: pushed.skill, mcpUrl: pushed.mcpUrl, sseUrl: pushed.sseUrl, stop };
    }
    const dev = await startWranglerDev(options.wrangler);
    ownDev = dev;
    await loadCatalog(dev.baseUrl, { skills: { default: skill } }, options.adminHeaders);
    return { dev, fake, fixtures, fxBase, skill: "default", mcpUrl: `${dev.baseUrl}/mcp`, sseUrl: `${dev.baseUrl}/sse`, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The Tasks e2e files' expert: one echo through the fixture server, then an answer; `task: optional`. */
export function echoTaskExpert(fake: FakeOpenAIServer): ExpertInput {
  return fakeModelExpert(fake, {
    name: "echo_expert",
    description: "Echoes the query through the fixture server.",
    internal_tools: { fx: ["echo"] },
    budget: { max_steps: 4, timeout_ms: 30_000, max_output_tokens: 512, max_tool_calls: 4, max_tool_result_bytes: 4_096 },
    task: "optional",
  });
}

/**
 * Scripts the fake model: it asks for one echo of `echoText`, then answers with what the tool
 * said once the returned release is called (a task or call held in flight while a test looks).
 */
export function holdModelAnswer(fake: FakeOpenAIServer, echoText: string): () => void {
  let open = () => {};
  const opened = new Promise<void>((resolve) => (open = resolve));
  fake.reset(async (request) => {
    const results = toolResultMessages(request);
    if (results.length === 0) return toolCallsReply({ name: "fx__echo", arguments: { text: echoText } });
    await opened;
    return textReply(`downstream said: ${results.map((r) => r.content).join(" | ")}`);
  });
  return open;
}
