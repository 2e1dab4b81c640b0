import { inject, describe, expect, it, beforeAll, afterAll } from "vitest";
import type { Client } from "@modelcontextprotocol/client";
import { META_TRACE } from "../../../src/mcp/delivery/expert-tool-result";
import { readFixtureStats, taggedBase } from "../../fixtures/fixture-stats-client";
import { expertOf } from "../../support/workers/session-helpers";
import { useCatalogWithScriptedModels } from "../../support/workers/scripted-model";
import { connectClient } from "../mcp-test-client";

const fixtures = inject("fixtureServers");
const skill = "caller-trace";
const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN = "00f067aa0ba902b7";

function traceOf(result: { _meta?: Record<string, unknown> }): { runId: string; traceId: string } {
  return result._meta?.[META_TRACE] as { runId: string; traceId: string };
}

// The orchestrator's trace context in `params._meta` (SEP-414): the run joins its trace, and every
// request the run makes (the downstream tools/call, as header and in `_meta`; the model call)
// names the run's own span as parent, inside the caller's trace.
describe("a tools/call carrying the caller's traceparent", () => {
  const echo = taggedBase(fixtures.echo, "caller-trace");
  const models = useCatalogWithScriptedModels({
    skills: { [skill]: { servers: { echo: { url: `${echo}/mcp`, transport: "streamable-http" } }, experts: [expertOf("echoer", { echo: ["echo"] })] } },
  });
  let client: Client;
  beforeAll(async () => {
    client = await connectClient(`/s/${skill}/mcp`, "2025");
  });
  afterAll(async () => client.close());

  it("joins the caller's trace and passes it on to the downstream call and the model", async () => {
    const model = models.play([{ calls: [{ name: "echo__echo", input: { text: "hi" } }] }, { text: "done" }]);
    const result = await client.callTool({
      name: "echoer",
      arguments: { query: "q" },
      _meta: { traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01`, tracestate: "vendor=abc" },
    });
    expect(result.isError).toBeFalsy();
    const { runId, traceId } = traceOf(result);
    expect(traceId).toBe(TRACE_ID);
    expect(traceId).not.toBe(runId.replaceAll("-", ""));

    // The model call names the run's own span (invoke_agent) as parent, never the caller's span.
    const modelHeader = String(model.doGenerateCalls[0]?.headers?.["traceparent"]);
    const runSpan = new RegExp(`^00-${TRACE_ID}-([0-9a-f]{16})-01$`).exec(modelHeader)?.[1];
    expect(runSpan).toBeDefined();
    expect(runSpan).not.toBe(CALLER_SPAN);
    for (const generate of model.doGenerateCalls) expect(generate.headers).toMatchObject({ traceparent: modelHeader, tracestate: "vendor=abc" });
    // The downstream call names its own span (execute_tool) as parent, in the header and in _meta.
    const stats = await readFixtureStats(echo);
    const header = stats.callTraceparents.at(-1) ?? "";
    const toolSpan = new RegExp(`^00-${TRACE_ID}-([0-9a-f]{16})-01$`).exec(header)?.[1];
    expect(toolSpan).toBeDefined();
    expect([CALLER_SPAN, runSpan]).not.toContain(toolSpan);
    expect(stats.callMetaTraces.at(-1)).toEqual({ traceparent: header, tracestate: "vendor=abc" });
  });

  it("ignores a malformed traceparent: the run starts its own trace", async () => {
    models.play([{ text: "done" }]);
    for (const traceparent of [
      `00-${"0".repeat(32)}-${CALLER_SPAN}-01`,
      `00-${TRACE_ID}-zzzzzzzzzzzzzzzz-01`,
      `00-${TRACE_ID}-${CALLER_SPAN}-01`.repeat(100),
    ]) {
      const result = await client.callTool({ name: "echoer", arguments: { query: "q" }, _meta: { traceparent, tracestate: "vendor=abc" } });
      expect(result.isError).toBeFalsy();
      const { runId, traceId } = traceOf(result);
      expect(traceId).toBe(runId.replaceAll("-", ""));
    }
  });
});
