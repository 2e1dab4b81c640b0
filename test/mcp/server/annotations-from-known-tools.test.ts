import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { watchD1ForTests } from "../../../src/experts/limits/d1-call-path-seam";
import { admin } from "../../admin/admin-test-client";
import { readFixtureStats, taggedBase } from "../../fixtures/fixture-stats-client";
import { useCatalogWithScriptedModels } from "../../support/workers/scripted-model";
import { callOf, sessionOf } from "../../support/workers/session-helpers";
import { DEMO_DOCS_SERVER } from "../expert-test-setup";
import { connectClient, type Era } from "../mcp-test-client";

const fixtures = inject("fixtureServers");
const skill = "known-tools";
// A server whose lists may never be reused, like the demo docs server (`ttlMs: 0` on 2026-07-28 list results).
const eraseBase = taggedBase(fixtures.echo, "known-erase");

const expert = (name: string, internalTools: Record<string, string[]>) => ({
  name,
  description: `${name} expert`,
  arguments: { type: "object", properties: { query: { type: "string" } }, required: ["query"], additionalProperties: false },
  internal_tools: internalTools,
  provider: "openai-compatible",
  base_url: "http://127.0.0.1:9/v1",
});

/**
 * Issue 35.3: the demo expert was advertised as destructive, with an `approve` argument, although
 * both its tools are read-only. Its docs server answers tools/list with `ttlMs: 0`, so nothing
 * was cached and the annotations fell back to "may destroy". The annotations and the argument now
 * come from the last known (pinned) definitions, however short the server's TTL.
 */
describe("expert tools/list from the last known downstream definitions, whatever their TTL", () => {
  const models = useCatalogWithScriptedModels({
    skills: {
      [skill]: {
        servers: {
          docs: DEMO_DOCS_SERVER,
          tracker: { url: `${eraseBase}/mcp`, transport: "streamable-http", tool_list_ttl_ms: 0 },
        },
        experts: [expert("ask_docs", { docs: ["search_docs", "read_doc"] }), expert("erase_records", { tracker: ["echo", "erase"] })],
      },
    },
  });

  beforeAll(async () => {
    // One run of each expert lists its server, as any first call does.
    models.play([{ text: "answered" }]);
    for (const name of ["ask_docs", "erase_records"]) {
      expect(await sessionOf(skill).callExpert(callOf(skill, name, "anything"))).toMatchObject({ outcome: "ok" });
    }
    expect((await readFixtureStats(eraseBase)).toolsList).toBe(1);
  });

  for (const era of ["2025", "2026"] as const satisfies readonly Era[]) {
    describe(`${era} client`, () => {
      let client: Client;
      beforeAll(async () => {
        client = await connectClient(`/s/${skill}/mcp`, era);
      });
      afterAll(async () => client.close());

      it("a read-only expert is read-only and takes no approve; a destructive one keeps both", async () => {
        const { tools } = await client.listTools();
        const byName = new Map(tools.map((tool) => [tool.name, tool]));
        const docs = byName.get("ask_docs");
        expect(docs?.annotations).toMatchObject({ readOnlyHint: true });
        expect(docs?.annotations?.destructiveHint).not.toBe(true);
        expect(Object.keys(docs?.inputSchema.properties ?? {})).not.toContain("approve");

        const erase = byName.get("erase_records");
        expect(erase?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
        expect(Object.keys(erase?.inputSchema.properties ?? {})).toContain("approve");
      });
    });
  }

  it("a later run lists the ttlMs-0 server again; an unchanged listing needs no D1 pin check on the call's path", async () => {
    models.play([{ text: "answered again" }]);
    const statements: string[] = [];
    watchD1ForTests((_what, sql) => statements.push(sql));
    try {
      expect(await sessionOf(skill).callExpert(callOf(skill, "erase_records", "again"))).toMatchObject({ outcome: "ok" });
    } finally {
      watchD1ForTests(undefined);
    }
    expect((await readFixtureStats(eraseBase)).toolsList).toBe(2);
    expect(statements).toEqual([]);
    const client = await connectClient(`/s/${skill}/mcp`, "2026");
    try {
      const erase = (await client.listTools()).tools.find((tool) => tool.name === "erase_records");
      expect(erase?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    } finally {
      await client.close();
    }
  });
});

/**
 * Before any run has listed a server, an admin's health probe (which `npm start` makes after
 * loading the demo) records the listing through the same pin check, so the first tools/list a
 * newcomer sees already knows the demo expert is read-only.
 */
describe("a health probe makes a server's definitions known before any run", () => {
  const probed = "known-by-probe";
  useCatalogWithScriptedModels({
    skills: { [probed]: { servers: { docs: DEMO_DOCS_SERVER }, experts: [expert("ask_docs", { docs: ["search_docs", "read_doc"] })] } },
  });

  it("tools/list is conservative before the probe, and read-only with no approve after it", async () => {
    const client = await connectClient(`/s/${probed}/mcp`, "2025");
    try {
      const before = (await client.listTools()).tools[0];
      expect(before?.annotations?.readOnlyHint).not.toBe(true);
      expect(Object.keys(before?.inputSchema.properties ?? {})).toContain("approve");

      const health = await admin("GET", `/skills/${probed}/health`);
      expect(health.status).toBe(200);
      expect(health.body).toMatchObject({ ok: true, servers: [{ server: "docs", ok: true, toolCount: 2 }] });

      const after = (await client.listTools()).tools[0];
      expect(after?.annotations?.readOnlyHint).toBe(true);
      expect(after?.annotations?.destructiveHint).not.toBe(true);
      expect(Object.keys(after?.inputSchema.properties ?? {})).not.toContain("approve");
    } finally {
      await client.close();
    }
  });
});
