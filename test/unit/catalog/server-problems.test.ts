import { describe, expect, it } from "vitest";
import { parseCatalog } from "../../../src/catalog/parse-catalog";
import { defaultSkill, firstExpert, problemAt, problemsOf, validCatalog } from "./catalog-fixtures";

function withServers(servers: Record<string, unknown>): ReturnType<typeof validCatalog> {
  const catalog = validCatalog();
  defaultSkill(catalog).servers = servers;
  firstExpert(catalog).internal_tools = {};
  return catalog;
}

describe("server checks", () => {
  it("a stdio server is refused with the bridge to run it behind, and nothing else about it", () => {
    const catalog = withServers({ fs: { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "/src"], env: { ROOT: "/src" } } });
    const problems = problemsOf(catalog);
    expect(problems).toHaveLength(1);
    const problem = problemAt(problems, "$.skills.default.servers.fs.command");
    expect(problem.message).toContain("cannot spawn processes");
    expect(problem.fix).toContain('npx -y supergateway --stdio "npx -y @modelcontextprotocol/server-filesystem /src" --outputTransport streamableHttp');
    expect(problem.fix).toContain("mcp-proxy");
    expect(problem.fix).toContain("https");
    expect(problem.fix).toContain("`url`");
  });

  it('`transport: "stdio"` is reported at transport', () => {
    const problem = problemAt(problemsOf(withServers({ fs: { transport: "stdio" } })), "$.skills.default.servers.fs.transport");
    expect(problem.fix).toContain("supergateway");
  });

  it("a server id with `__` suggests the id with `-`", () => {
    const problem = problemAt(problemsOf(withServers({ my__docs: { url: "https://d.example/mcp" } })), "$.skills.default.servers.my__docs");
    expect(problem.message).toContain("`__`");
    expect(problem.fix).toContain("rename it to `my-docs`");
  });

  it("a server id outside the id pattern gets a sanitized suggestion", () => {
    const problem = problemAt(problemsOf(withServers({ "My Docs": { url: "https://d.example/mcp" } })), '$.skills.default.servers["My Docs"]');
    expect(problem.fix).toContain("`my-docs`");
  });

  it("a server with neither url nor binding", () => {
    const problem = problemAt(problemsOf(withServers({ docs: { description: "docs" } })), "$.skills.default.servers.docs");
    expect(problem.message).toContain("neither `url` nor `binding`");
    expect(problem.fix).toContain("set `url`");
  });

  it("a literal Authorization credential is refused without echoing it", () => {
    const catalog = withServers({ docs: { url: "https://d.example/mcp", headers: { Authorization: "Bearer sk-live-abcdef123456" } } });
    const problem = problemAt(problemsOf(catalog), "$.skills.default.servers.docs.headers.Authorization");
    expect(problem.fix).toBe("store it with `wrangler secret put DOCS_TOKEN` and write `Bearer ${DOCS_TOKEN}`");
    expect(JSON.stringify(problem)).not.toContain("sk-live");
  });

  it("a literal value in an API-key header is refused too", () => {
    const catalog = withServers({ docs: { url: "https://d.example/mcp", headers: { "X-Api-Key": "abc123" } } });
    const problem = problemAt(problemsOf(catalog), "$.skills.default.servers.docs.headers.X-Api-Key");
    expect(problem.fix).toContain("wrangler secret put DOCS_X_API_KEY");
    expect(problem.fix).toContain("`${DOCS_X_API_KEY}`");
  });

  it("a `${name}` reference that is not UPPER_SNAKE suggests the secret name", () => {
    const catalog = withServers({ docs: { url: "https://d.example/mcp", headers: { Authorization: "Bearer ${docsToken}" } } });
    const problem = problemAt(problemsOf(catalog), "$.skills.default.servers.docs.headers.Authorization");
    expect(problem.message).toContain("not a valid Worker secret name");
    expect(problem.fix).toContain("`${DOCS_TOKEN}`");
  });

  it("plain non-credential headers are fine", () => {
    const catalog = withServers({ docs: { url: "https://d.example/mcp", headers: { "X-Client": "slipsnisse", Authorization: "Bearer ${DOCS_TOKEN}" } } });
    expect(() => problemsOf(catalog)).toThrow(/accepted/);
  });
});

describe("response size and new-tool review fields", () => {
  for (const [value, expected] of [
    [512, "at least 1024"],
    [64 * 1024 * 1024, "at most 33554432"],
    [1.5, "an int"],
    ["4MB", "number"],
  ] as const) {
    it(`max_response_bytes ${JSON.stringify(value)} is refused at its JSON path (${expected})`, () => {
      const problem = problemAt(
        problemsOf(withServers({ docs: { url: "https://d.example/mcp", max_response_bytes: value } })),
        "$.skills.default.servers.docs.max_response_bytes",
      );
      expect(`${problem.message} ${problem.fix}`).toMatch(new RegExp(expected.replace(/ /g, ".*"), "i"));
    });
  }

  it("auto_approve_new_tools must be a boolean", () => {
    problemAt(
      problemsOf(withServers({ docs: { url: "https://d.example/mcp", auto_approve_new_tools: "yes" } })),
      "$.skills.default.servers.docs.auto_approve_new_tools",
    );
  });

  it("both are accepted with sane values", () => {
    const parsed = parseCatalog(withServers({ docs: { url: "https://d.example/mcp", max_response_bytes: 1_048_576, auto_approve_new_tools: true } }));
    expect(parsed.ok && parsed.catalog.skills.default?.servers.docs).toMatchObject({ max_response_bytes: 1_048_576, auto_approve_new_tools: true });
  });
});
