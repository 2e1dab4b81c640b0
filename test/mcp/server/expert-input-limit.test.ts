import { env, runInDurableObject } from "cloudflare:test";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { META_THREAD } from "../../../src/mcp/delivery/expert-tool-result";
import { sessionStub } from "../../../src/experts/session/session-name";
import { useCatalogWithScriptedModels } from "../../support/workers/scripted-model";
import { askDocsCatalog, textOf } from "../expert-test-setup";
import { connectClient } from "../mcp-test-client";

const SKILL = "input-bounds";
const DEFAULT_LIMIT = 32_768;

function catalogWithSmallLimit() {
  const catalog = askDocsCatalog(SKILL);
  const skill = catalog.skills[SKILL];
  const [expert] = skill?.experts ?? [];
  if (!skill || !expert) throw new Error("askDocsCatalog changed shape");
  skill.experts.push({ ...expert, name: "ask_briefly", budget: { max_input_bytes: 1_024 } } as typeof expert);
  return catalog;
}

/** Row counts of the user's session tables: what a refused call must leave untouched. */
async function sessionRows(): Promise<Record<string, number>> {
  return runInDurableObject(sessionStub(env, SKILL, "local:dev"), (_instance, state) =>
    Object.fromEntries(
      ["runs", "run_steps", "threads", "thread_turns"].map((table) => [
        table,
        state.storage.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`).one().n,
      ]),
    ),
  );
}

describe("tool arguments are bounded by the expert's max_input_bytes", () => {
  const models = useCatalogWithScriptedModels(catalogWithSmallLimit());
  let client: Client;
  beforeAll(async () => {
    client = await connectClient(`/s/${SKILL}/mcp`, "2026");
  });
  afterAll(async () => client.close());

  it("refuses arguments over the default 32 KiB with a tool error naming the limit and the size, without a model call or a stored turn", async () => {
    const before = await sessionRows();
    const model = models.play([{ text: "must not run" }]);
    const query = "x".repeat(40_000);
    const result = await client.callTool({ name: "ask_docs", arguments: { query } });
    expect(result.isError).toBe(true);
    const text = textOf(result);
    expect(text).toContain(`${DEFAULT_LIMIT} bytes`);
    expect(text).toContain(`${JSON.stringify({ query }).length} bytes`);
    expect(text).toContain("max_input_bytes");
    expect(model.doGenerateCalls).toHaveLength(0);
    expect(await sessionRows()).toEqual(before);
  });

  it("refuses an oversized follow-up without touching the thread", async () => {
    models.play([{ text: "First answer." }]);
    const first = await client.callTool({ name: "ask_docs", arguments: { query: "a small question" } });
    const thread = first._meta?.[META_THREAD] as string;
    expect(thread).toMatch(/^th_/);
    const before = await sessionRows();
    const model = models.play([{ text: "must not run" }]);
    const result = await client.callTool({ name: "ask_docs", arguments: { query: "y".repeat(DEFAULT_LIMIT), thread } });
    expect(result.isError).toBe(true);
    expect(model.doGenerateCalls).toHaveLength(0);
    expect(await sessionRows()).toEqual(before);
  });

  it("accepts arguments under the limit", async () => {
    const model = models.play([{ text: "fine" }]);
    const result = await client.callTool({ name: "ask_docs", arguments: { query: "z".repeat(DEFAULT_LIMIT - 100) } });
    expect(result.isError).toBeFalsy();
    expect(model.doGenerateCalls).toHaveLength(1);
  });

  it("honours a limit set in the expert's budget", async () => {
    const model = models.play([{ text: "must not run" }]);
    const result = await client.callTool({ name: "ask_briefly", arguments: { query: "q".repeat(2_000) } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("1024 bytes");
    expect(model.doGenerateCalls).toHaveLength(0);
  });
});
