import { describe, expect, it } from "vitest";
import { expertSchema, toolPolicySchema } from "../../../src/catalog/catalog-schema";
import type { DownstreamTool } from "../../../src/downstream/downstream-types";
import { deriveExpertAnnotations, expertMayNeedApproval, expertTitle } from "../../../src/experts/tools/expert-tool-annotations";

type Hints = DownstreamTool["annotations"];
const tool = (name: string, annotations?: Hints): DownstreamTool => ({
  name,
  inputSchema: { type: "object" },
  ...(annotations ? { annotations } : {}),
});

const readOnly = { readOnlyHint: true, openWorldHint: false };
const closedWrite = { readOnlyHint: false, destructiveHint: false, openWorldHint: false };
const closedDelete = { readOnlyHint: false, destructiveHint: true, openWorldHint: false };

interface Row {
  case: string;
  whitelist: Record<string, string[]>;
  listings: Record<string, DownstreamTool[] | undefined>;
  blocked?: string[];
  expected: { readOnlyHint: boolean; destructiveHint?: boolean; openWorldHint: boolean };
}

const rows: Row[] = [
  {
    case: "every whitelisted tool read-only and closed-world",
    whitelist: { wiki: ["get_*"] },
    listings: { wiki: [tool("get_page", readOnly), tool("get_links", readOnly), tool("delete_page", closedDelete)] },
    expected: { readOnlyHint: true, openWorldHint: false },
  },
  {
    case: "one read-only tool leaves the rest open-world by default (openWorldHint absent)",
    whitelist: { wiki: ["get_page"], web: ["fetch"] },
    listings: { wiki: [tool("get_page", readOnly)], web: [tool("fetch", { readOnlyHint: true })] },
    expected: { readOnlyHint: true, openWorldHint: true },
  },
  {
    case: "a non-destructive write makes it not read-only, not destructive",
    whitelist: { wiki: ["get_page", "edit_page"] },
    listings: { wiki: [tool("get_page", readOnly), tool("edit_page", closedWrite)] },
    expected: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
  },
  {
    case: "any destructive tool makes it destructive",
    whitelist: { wiki: ["*"] },
    listings: { wiki: [tool("get_page", readOnly), tool("edit_page", closedWrite), tool("delete_page", closedDelete)] },
    expected: { readOnlyHint: false, destructiveHint: true, openWorldHint: false },
  },
  {
    case: "an unannotated tool counts with the spec defaults: writes, destroys, open world",
    whitelist: { wiki: ["get_page"], misc: ["thing"] },
    listings: { wiki: [tool("get_page", readOnly)], misc: [tool("thing")] },
    expected: { readOnlyHint: false, destructiveHint: true, openWorldHint: true },
  },
  {
    case: "a server whose list is not cached counts with the spec defaults",
    whitelist: { wiki: ["get_page"], later: ["anything"] },
    listings: { wiki: [tool("get_page", readOnly)], later: undefined },
    expected: { readOnlyHint: false, destructiveHint: true, openWorldHint: true },
  },
  {
    case: "a tool the skill's policy blocks is not the expert's to call",
    whitelist: { wiki: ["*"] },
    listings: { wiki: [tool("get_page", readOnly), tool("delete_page", closedDelete)] },
    blocked: ["wiki__delete_*"],
    expected: { readOnlyHint: true, openWorldHint: false },
  },
  {
    case: "a whitelisted tool the server does not list is not counted",
    whitelist: { wiki: ["get_page", "gone"] },
    listings: { wiki: [tool("get_page", readOnly)] },
    expected: { readOnlyHint: true, openWorldHint: false },
  },
];

describe("expert tool annotations derived from the whitelist", () => {
  it.each(rows)("$case", (row) => {
    const expert = expertSchema.parse({ name: "ask_wiki", description: "d", internal_tools: row.whitelist });
    const policy = toolPolicySchema.parse({ blocked: row.blocked ?? [] });
    const annotations = deriveExpertAnnotations(expert, policy, new Map(Object.entries(row.listings)));
    expect(annotations).toEqual({ title: "Ask wiki", ...row.expected });
  });

  it("titles a tool from the catalog's `title`, else from its name", () => {
    expect(expertTitle({ name: "research_dependency" })).toBe("Research dependency");
    expect(expertTitle({ name: "ask-docs.v2" })).toBe("Ask docs v2");
    expect(expertTitle({ name: "ask_docs", title: "Docs librarian" })).toBe("Docs librarian");
  });
});

describe("whether an expert's schema offers `approve`", () => {
  const expert = expertSchema.parse({ name: "ask_wiki", description: "d", internal_tools: { wiki: ["get_*", "delete_page"] } });
  const listing = (tools: DownstreamTool[]) => new Map([["wiki", tools]]);

  it.each([
    { case: "read-only tools under the default policy", policy: {}, tools: [tool("get_page", readOnly)], expected: false },
    { case: "a whitelisted destructive tool", policy: {}, tools: [tool("get_page", readOnly), tool("delete_page", closedDelete)], expected: true },
    {
      case: "a destructive tool when approve_destructive is off",
      policy: { approve_destructive: false },
      tools: [tool("delete_page", closedDelete)],
      expected: false,
    },
    { case: "a destructive tool the policy blocks", policy: { blocked: ["wiki__delete_*"] }, tools: [tool("delete_page", closedDelete)], expected: false },
    { case: "a destructive tool outside the whitelist", policy: {}, tools: [tool("get_page", readOnly), tool("drop_wiki", closedDelete)], expected: false },
    {
      case: "a requires_approval pattern naming a whitelisted tool",
      policy: { requires_approval: ["wiki__get_page"] },
      tools: [tool("get_page", readOnly)],
      expected: true,
    },
  ])("$case: $expected", ({ policy, tools, expected }) => {
    expect(expertMayNeedApproval(expert, toolPolicySchema.parse(policy), listing(tools))).toBe(expected);
  });

  it("a server whose list is not known may list one", () => {
    expect(expertMayNeedApproval(expert, toolPolicySchema.parse({}), new Map([["wiki", undefined]]))).toBe(true);
  });
});
