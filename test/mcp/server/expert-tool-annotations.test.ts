import { env } from "cloudflare:test";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { downstreamServerSchema } from "../../../src/catalog/catalog-schema";
import { ToolListCache } from "../../../src/downstream/tool-list-cache";
import { readFixtureStats, taggedBase } from "../../fixtures/fixture-stats-client";
import { useCatalogWithScriptedModels } from "../../support/workers/scripted-model";
import { connectClient, type Era } from "../mcp-test-client";

const fixtures = inject("fixtureServers");
const skill = "annotated";
// Real servers: had tools/list connected to any of them, their request counters would show it.
const bases = { wiki: taggedBase(fixtures.echo, "ann-wiki"), tracker: taggedBase(fixtures.echo, "ann-tracker"), later: taggedBase(fixtures.echo, "ann-later") };
const servers = Object.fromEntries(Object.entries(bases).map(([id, base]) => [id, { url: `${base}/mcp`, transport: "streamable-http" }]));

const input = { type: "object" as const };
const cachedLists = {
  wiki: [
    { name: "get_page", inputSchema: input, annotations: { readOnlyHint: true, openWorldHint: false } },
    { name: "delete_page", inputSchema: input, annotations: { destructiveHint: true, openWorldHint: false } },
  ],
  tracker: [{ name: "file_issue", inputSchema: input, annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false } }],
};

describe("expert tools describe themselves in tools/list", () => {
  useCatalogWithScriptedModels({
    skills: {
      [skill]: {
        servers,
        experts: [
          { name: "read_wiki", title: "Wiki reader", description: "Reads the wiki.", internal_tools: { wiki: ["get_*"] } },
          { name: "file_issues", description: "Files issues.", internal_tools: { wiki: ["get_page"], tracker: ["file_issue"] } },
          { name: "wiki_admin", description: "Cleans the wiki.", internal_tools: { wiki: ["*"] } },
          { name: "ask_later", description: "Uses a server not listed yet.", internal_tools: { later: ["anything"] } },
        ],
      },
    },
  });

  beforeAll(async () => {
    const cache = new ToolListCache(env.CACHE, skill);
    for (const [serverId, tools] of Object.entries(cachedLists)) {
      await cache.write(serverId, downstreamServerSchema.parse(servers[serverId]), tools, 600_000);
    }
  });

  for (const era of ["2025", "2026"] as const satisfies readonly Era[]) {
    describe(`${era} client`, () => {
      let client: Client;
      beforeAll(async () => {
        client = await connectClient(`/s/${skill}/mcp`, era);
      });
      afterAll(async () => client.close());

      it("derives titles and hints from the cached whitelisted tools, without connecting downstream", async () => {
        const { tools } = await client.listTools();
        const byName = Object.fromEntries(tools.map((tool) => [tool.name, { title: tool.title, annotations: tool.annotations }]));
        expect(byName).toEqual({
          read_wiki: { title: "Wiki reader", annotations: { title: "Wiki reader", readOnlyHint: true, openWorldHint: false } },
          file_issues: { title: "File issues", annotations: { title: "File issues", readOnlyHint: false, destructiveHint: false, openWorldHint: false } },
          wiki_admin: { title: "Wiki admin", annotations: { title: "Wiki admin", readOnlyHint: false, destructiveHint: true, openWorldHint: false } },
          // Nothing cached for "later": the spec's defaults for an unannotated tool.
          ask_later: { title: "Ask later", annotations: { title: "Ask later", readOnlyHint: false, destructiveHint: true, openWorldHint: true } },
        });
        for (const base of Object.values(bases)) expect((await readFixtureStats(base)).requests).toBe(0);
      });
    });
  }
});
