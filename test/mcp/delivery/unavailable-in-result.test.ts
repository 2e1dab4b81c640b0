import { env } from "cloudflare:test";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { replaceCatalog } from "../../../src/catalog/catalog-service";
import { setModelResolverForTests } from "../../../src/experts/models/model-resolver-override";
import { sessionStub } from "../../../src/experts/session/session-name";
import { META_RUN, META_UNAVAILABLE } from "../../../src/mcp/delivery/expert-tool-result";
import { taggedBase } from "../../fixtures/fixture-stats-client";
import { scriptedModel, type ScriptedTurn } from "../../support/workers/scripted-model";
import { expertOf } from "../../support/workers/session-helpers";
import { textOf } from "../expert-test-setup";
import { connectClient } from "../mcp-test-client";

const fixtures = inject("fixtureServers");
const skill = "unavailable-meta";
const base = taggedBase(fixtures.echo, "unavailable-meta");
/** The loopback dev user every MCP request of the workerd tests is (AUTH "none"). */
const DEV_USER = "local:dev";

async function restartable(action: "start" | "stop"): Promise<string> {
  const response = await fetch(`${base}/restartable/${action}`, { method: "POST" });
  if (!response.ok) throw new Error(`restartable ${action}: HTTP ${response.status}`);
  return action === "start" ? ((await response.json()) as { origin: string }).origin : "";
}

/**
 * Issue 40.5 (a): during a downstream outage the orchestrator got `isError: false` and an answer
 * quoting the failure, with nothing to tell it the expert had worked without its tools. The
 * result's `_meta["slipsnisse.dev/unavailable"]` and the run record now name each server (and
 * tool) the run could not reach; a run that reached everything has neither.
 */
describe("an expert result says which downstream servers and tools were unavailable", () => {
  let model = scriptedModel([{ text: "no turn scripted" }]);
  const play = (turns: ScriptedTurn[]) => {
    model = scriptedModel(turns);
  };
  let client: Client;

  beforeAll(async () => {
    const origin = await restartable("start");
    const catalog = {
      skills: {
        [skill]: {
          servers: {
            srv: { url: `${origin}/mcp`, transport: "streamable-http" },
            gone: { url: `${fixtures.dead}/mcp`, transport: "streamable-http" },
          },
          experts: [expertOf("ask", { srv: ["echo"] }), expertOf("ask_both", { srv: ["echo"], gone: ["anything"] })],
        },
      },
    };
    expect((await replaceCatalog(env, catalog, "test")).ok).toBe(true);
    setModelResolverForTests(() => model);
    client = await connectClient(`/s/${skill}/mcp`, "2026");
  });
  afterAll(async () => {
    setModelResolverForTests(undefined);
    await client.close();
    await restartable("stop");
  });

  const ask = (name: string) => client.callTool({ name, arguments: { query: "Echo hello." } });
  const storedRun = async (runId: unknown) => sessionStub(env, skill, DEV_USER).run(String(runId));

  it("a run that reached its server says nothing of the kind", async () => {
    play([{ calls: [{ name: "srv__echo", input: { text: "hello" } }] }, { text: "It said hello." }]);
    const result = await ask("ask");
    expect(result.isError).toBeFalsy();
    expect(result._meta?.[META_UNAVAILABLE]).toBeUndefined();
    expect((await storedRun(result._meta?.[META_RUN]))?.unavailable).toEqual([]);
  });

  it("a call that failed because the server went away: a model answer, with the server and tool named", async () => {
    await restartable("stop");
    play([{ calls: [{ name: "srv__echo", input: { text: "hello" } }] }, { text: "The echo tool could not be reached." }]);
    const result = await ask("ask");
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toContain("could not be reached");
    const unavailable = [{ server: "srv", tool: "echo", reason: expect.any(String) }];
    expect(result._meta?.[META_UNAVAILABLE]).toEqual(unavailable);
    expect((await storedRun(result._meta?.[META_RUN]))?.unavailable).toEqual(unavailable);
  });

  it("a server whose tools were left out (its listing failed) is named without a tool", async () => {
    play([{ text: "Answered without the other server." }]);
    const result = await ask("ask_both");
    expect(result.isError).toBeFalsy();
    const unavailable = [{ server: "gone", reason: expect.stringMatching(/unavailable/) }];
    expect(result._meta?.[META_UNAVAILABLE]).toEqual(unavailable);
    expect((await storedRun(result._meta?.[META_RUN]))?.unavailable).toEqual(unavailable);
  });
});
