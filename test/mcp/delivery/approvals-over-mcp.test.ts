import { env } from "cloudflare:test";
import { Client, SSEClientTransport, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as StreamableHTTPClientTransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema as ElicitRequestSchemaV1 } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { replaceCatalog } from "../../../src/catalog/catalog-service";
import { DedupeInboundTransport } from "../../../src/downstream/dedupe-inbound-transport";
import { setModelResolverForTests } from "../../../src/experts/models/model-resolver-override";
import { sessionStub } from "../../../src/experts/session/session-name";
import { META_QUESTION } from "../../../src/mcp/delivery/expert-tool-result";
import { readFixtureStats, taggedBase } from "../../fixtures/fixture-stats-client";
import { scriptedModel } from "../../support/workers/scripted-model";
import { expertOf } from "../../support/workers/session-helpers";
import { textOf } from "../expert-test-setup";
import type { UserProps } from "../../../src/auth/user-props";
import { appFetchAs, selfFetch } from "../mcp-test-client";

const fixtures = inject("fixtureServers");
const echo = taggedBase(fixtures.echo, "approvals-mcp");
const skill = "approvals-mcp";

type Reply = { action: "accept"; content: { approve: boolean } | { answer: string } } | { action: "decline" } | { action: "cancel" };

/** An SDK v2 client; with `reply`, it declares form elicitation and answers every request so. */
async function connect(kind: "2025" | "2026" | "sse", reply?: Reply) {
  const shown: string[] = [];
  const options = {
    ...(reply ? { capabilities: { elicitation: { form: {} } } } : {}),
    ...(kind === "2026" ? { versionNegotiation: { mode: { pin: "2026-07-28" as const } } } : {}),
  };
  const client = new Client({ name: "approvals-test", version: "0.0.0" }, options);
  if (reply) {
    client.setRequestHandler("elicitation/create", async (request) => {
      shown.push(request.params.message);
      return reply;
    });
  }
  const transport =
    kind === "sse"
      ? // Inside workerd the SDK's SSE client transport delivers every inbound message twice (docs/platform-notes.md).
        new DedupeInboundTransport(new SSEClientTransport(new URL(`http://localhost/s/${skill}/sse`), { fetch: selfFetch }))
      : new StreamableHTTPClientTransport(new URL(`http://localhost/s/${skill}/mcp`), { fetch: selfFetch });
  await client.connect(transport);
  return { client, shown };
}

const erases = async () => (await readFixtureStats(echo)).calls.erase ?? 0;
/** One model across the runs of a test: a paused run and the run that resumes it read one script in turn. */
let model = scriptedModel([{ text: "unscripted" }]);
const script = (answer: string) => {
  model = scriptedModel([{ calls: [{ name: "echo__erase", input: { record: "r9" } }] }, { text: answer }]);
};
const callCleaner = (client: Client, extra: Record<string, unknown> = {}) => client.callTool({ name: "cleaner", arguments: { query: "Erase r9.", ...extra } });

describe("approvals over MCP: elicitation where the client can, the pause where it cannot", () => {
  beforeAll(async () => {
    const catalog = {
      skills: {
        [skill]: {
          servers: { echo: { url: `${echo}/mcp`, transport: "streamable-http" } },
          experts: [expertOf("cleaner", { echo: ["erase"] }, { max_steps: 3 }), { ...expertOf("asker", { echo: ["add"] }, { max_steps: 3 }), ask_back: true }],
        },
      },
    };
    expect((await replaceCatalog(env, catalog, "test")).ok).toBe(true);
    setModelResolverForTests(() => model);
  });
  afterAll(() => setModelResolverForTests(undefined));

  it("advertises `approve` beside `thread` while the skill may need approvals", async () => {
    const { client } = await connect("2026");
    const { tools } = await client.listTools();
    const schema = tools[0]?.inputSchema as { properties: Record<string, unknown>; required?: string[] };
    expect(Object.keys(schema.properties).sort()).toEqual(["approve", "query", "thread"]);
    expect(schema.required).toEqual(["query"]);
    await client.close();
  });

  for (const [label, reply, runs, outcome] of [
    ["accepts", { action: "accept", content: { approve: true } }, 1, "approved"],
    ["declines", { action: "decline" }, 0, "declined"],
    ["dismisses the form", { action: "cancel" }, 0, "cancelled"],
  ] as const) {
    it(`2026-07-28 with elicitation: input_required reaches the user, who ${label}, inside one callTool`, async () => {
      const before = await erases();
      script("Finished.");
      const { client, shown } = await connect("2026", reply);
      const result = await callCleaner(client);
      expect(shown).toHaveLength(1);
      expect(shown[0]).toContain("echo__erase");
      expect(shown[0]).toContain('{"record":"r9"}');
      expect(textOf(result)).toContain("Finished.");
      expect(result.isError).toBeFalsy();
      expect(await erases()).toBe(before + runs);
      // The resumed run's trace opens with the user's decision (tests run as the loopback dev user).
      const session = sessionStub(env, skill, "local:dev");
      const [resumed] = await session.recentRuns(1);
      const [decided] = await session.steps(resumed?.id ?? "");
      expect(decided).toMatchObject({
        finishReason: "approval",
        toolCalls: [{ name: "echo__erase", decision: { outcome, by: "user" } }],
      });
      await client.close();
    });
  }

  for (const [label, reply, runs, outcome] of [
    ["accepts", { action: "accept", content: { approve: true } }, 1, "approved"],
    ["declines", { action: "decline" }, 0, "declined"],
  ] as const) {
    it(`stateless 2025 Streamable HTTP with elicitation (SDK v2): the user is asked mid-call on the call's stream and ${label}`, async () => {
      const before = await erases();
      script("Finished.");
      const { client, shown } = await connect("2025", reply);
      const result = await callCleaner(client);
      expect(shown).toHaveLength(1);
      expect(shown[0]).toContain("echo__erase");
      expect(textOf(result)).toContain("Finished.");
      expect(result._meta?.[META_QUESTION]).toBeUndefined();
      expect(await erases()).toBe(before + runs);
      const [run] = await sessionStub(env, skill, "local:dev").recentRuns(1);
      const steps = await sessionStub(env, skill, "local:dev").steps(run?.id ?? "");
      expect(JSON.stringify(steps)).toContain(`"outcome":"${outcome}"`);
      await client.close();
    });
  }

  it("stateless 2025 Streamable HTTP: another user's reply naming the request id does not reach the run", async () => {
    const ann: UserProps = { userId: "dev-reply-ann", login: "ann", role: "member" };
    const ben: UserProps = { userId: "dev-reply-ben", login: "ben", role: "member" };
    const before = await erases();
    script("Finished.");
    const client = new Client({ name: "approvals-test-ann", version: "0.0.0" }, { capabilities: { elicitation: { form: {} } } });
    const forged: number[] = [];
    client.setRequestHandler("elicitation/create", async (_request, ctx) => {
      // Ben answers Ann's prompt first, naming its request id: his reply reaches his own session.
      const reply = { jsonrpc: "2.0", id: ctx.mcpReq.id, result: { action: "accept", content: { approve: true } } };
      const response = await appFetchAs(ben, `http://localhost/s/${skill}/mcp`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" },
        body: JSON.stringify(reply),
      });
      forged.push(response.status);
      return { action: "decline" };
    });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`http://localhost/s/${skill}/mcp`), { fetch: (input, init) => appFetchAs(ann, input, init) }),
    );
    const result = await callCleaner(client);
    expect(forged).toEqual([202]);
    expect(textOf(result)).toContain("Finished.");
    // Ann's own decline decided: the erase never ran.
    expect(await erases()).toBe(before);
    const [run] = await sessionStub(env, skill, ann.userId).recentRuns(1);
    const steps = await sessionStub(env, skill, ann.userId).steps(run?.id ?? "");
    expect(JSON.stringify(steps)).toContain('"outcome":"declined"');
    await client.close();
  });

  it("stateless 2025 Streamable HTTP with elicitation (SDK v1 client): asked mid-call, an ask_user answer reaches the run", async () => {
    model = scriptedModel([
      { calls: [{ name: "ask_user", input: { question: "Which colour?" } }] },
      (options) => ({
        content: [{ type: "text", text: `The user said ${JSON.stringify(options.prompt).includes("teal") ? "teal" : "nothing"}.` }],
        finishReason: { unified: "stop", raw: "stop" },
        usage: {
          inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
          outputTokens: { total: 1, text: 1, reasoning: undefined },
        },
        warnings: [],
      }),
    ]);
    const shown: string[] = [];
    const client = new ClientV1({ name: "approvals-test-v1", version: "0.0.0" }, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchemaV1, async (request) => {
      shown.push(request.params.message);
      return { action: "accept", content: { answer: "teal" } };
    });
    await client.connect(new StreamableHTTPClientTransportV1(new URL(`http://localhost/s/${skill}/mcp`), { fetch: selfFetch }));
    const result = await client.callTool({ name: "asker", arguments: { query: "Paint it." } });
    expect(shown).toEqual(["Which colour?"]);
    expect(textOf(result as { content?: unknown })).toContain("The user said teal.");
    await client.close();
  });

  it("legacy HTTP+SSE with elicitation: the user is asked mid-call, on the call's own connection", async () => {
    const before = await erases();
    script("Finished.");
    const { client, shown } = await connect("sse", { action: "accept", content: { approve: true } });
    const result = await callCleaner(client);
    expect(shown).toHaveLength(1);
    expect(textOf(result)).toContain("Finished.");
    expect(await erases()).toBe(before + 1);
    await client.close();
  });

  for (const [label, kind, reply] of [
    ["a client without elicitation", "2026", undefined],
    ["a stateless 2025 client without elicitation", "2025", undefined],
  ] as const) {
    it(`${label}: the run pauses with "approval needed", and approve: true resumes it`, async () => {
      const before = await erases();
      script("Erased after approval.");
      const { client, shown } = await connect(kind, reply);
      const paused = await callCleaner(client);
      expect(shown).toEqual([]);
      expect(textOf(paused)).toContain("Approval needed");
      const question = paused._meta?.[META_QUESTION] as { thread: string; for: string; approvals: unknown[] };
      expect(question).toMatchObject({ for: "approval", approvals: [{ name: "echo__erase", input: '{"record":"r9"}' }] });
      expect(await erases()).toBe(before);
      const resumed = await callCleaner(client, { thread: question.thread, approve: true });
      expect(textOf(resumed)).toContain("Erased after approval.");
      expect(await erases()).toBe(before + 1);
      await client.close();
    });
  }

  it("2026-07-28 with elicitation: an ask_user question reaches the user, and their answer is the tool's result", async () => {
    model = scriptedModel([
      { calls: [{ name: "ask_user", input: { question: "Which colour?" } }] },
      (options) => ({
        content: [{ type: "text", text: `The user said ${JSON.stringify(options.prompt).includes('"value":"teal"') ? "teal" : "nothing"}.` }],
        finishReason: { unified: "stop", raw: "stop" },
        usage: {
          inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
          outputTokens: { total: 1, text: 1, reasoning: undefined },
        },
        warnings: [],
      }),
    ]);
    const { client, shown } = await connect("2026", { action: "accept", content: { answer: "teal" } });
    const result = await client.callTool({ name: "asker", arguments: { query: "Paint it." } });
    expect(shown).toEqual(["Which colour?"]);
    expect(textOf(result)).toContain("The user said teal.");
    await client.close();
  });
});
