import { describe, expect, it } from "vitest";
import { parseCatalog } from "../../../src/catalog/parse-catalog";
import { defaultSkill, firstExpert, problemAt, problemsOf, validCatalog } from "./catalog-fixtures";

function withServers(servers: Record<string, unknown>): ReturnType<typeof validCatalog> {
  const catalog = validCatalog();
  defaultSkill(catalog).servers = servers;
  firstExpert(catalog).internal_tools = {};
  return catalog;
}

describe("server auth (connections)", () => {
  it("an oauth server parses with user connections by default, beside a server with static headers", () => {
    const result = parseCatalog(
      withServers({
        linear: { url: "https://mcp.linear.example/mcp", auth: { type: "oauth", scopes: ["read"] } },
        docs: { url: "https://docs.example.com/mcp", headers: { Authorization: "Bearer ${DOCS_TOKEN}" } },
      }),
    );
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const servers = result.catalog.skills.default?.servers;
    expect(servers?.linear?.auth).toEqual({ type: "oauth", connection: "user", scopes: ["read"] });
    expect(servers?.docs?.auth).toBeUndefined();
  });

  it("a static Authorization header beside oauth is refused at the header, naming both ways out", () => {
    const catalog = withServers({
      linear: { url: "https://mcp.linear.example/mcp", headers: { Authorization: "Bearer ${LINEAR_KEY}" }, auth: { type: "oauth" } },
    });
    const problem = problemAt(problemsOf(catalog), "$.skills.default.servers.linear.headers.Authorization");
    expect(problem.message).toContain("cannot also send a static `Authorization` header");
    expect(problem.fix).toContain("remove this header");
    expect(problem.fix).toContain("remove `auth`");
  });

  it("oauth through a service binding is refused at binding", () => {
    const problem = problemAt(problemsOf(withServers({ own: { binding: "OTHER", auth: { type: "oauth" } } })), "$.skills.default.servers.own.binding");
    expect(problem.fix).toContain("use `url`");
  });

  it("a client secret without a client id is refused at client_secret_secret", () => {
    const catalog = withServers({ gh: { url: "https://gh.example/mcp", auth: { type: "oauth", client_secret_secret: "GH_SECRET" } } });
    const problem = problemAt(problemsOf(catalog), "$.skills.default.servers.gh.auth.client_secret_secret");
    expect(problem.fix).toContain("client_id_secret");
  });

  it("unknown auth fields, types and connection kinds are named with their JSON path", () => {
    const problems = problemsOf(withServers({ gh: { url: "https://gh.example/mcp", auth: { type: "basic", connection: "everyone", scope: "x" } } }));
    expect(problemAt(problems, "$.skills.default.servers.gh.auth.type").message).toContain('"oauth"');
    expect(problemAt(problems, "$.skills.default.servers.gh.auth.connection").message).toContain('"user"');
    expect(problemAt(problems, "$.skills.default.servers.gh.auth.scope").fix).toContain("did you mean `scopes`?");
  });

  it("secret names in auth must be Worker secret names", () => {
    const problems = problemsOf(withServers({ gh: { url: "https://gh.example/mcp", auth: { type: "oauth", client_id_secret: "gh-client" } } }));
    expect(problemAt(problems, "$.skills.default.servers.gh.auth.client_id_secret").message).toContain("UPPER_SNAKE_CASE");
  });

  it("client_credentials parses for a team connection with a client id and secret, and keeps nothing else's defaults changed", () => {
    const result = parseCatalog(
      withServers({
        crm: {
          url: "https://crm.example/mcp",
          auth: { type: "oauth", connection: "team", grant: "client_credentials", client_id_secret: "CRM_ID", client_secret_secret: "CRM_SECRET" },
        },
      }),
    );
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.catalog.skills.default?.servers.crm?.auth).toMatchObject({ connection: "team", grant: "client_credentials" });
  });

  it("client_credentials on a per-member server, or without the client's id and secret, is refused at the field that is wrong", () => {
    const problems = problemsOf(withServers({ crm: { url: "https://crm.example/mcp", auth: { type: "oauth", grant: "client_credentials" } } }));
    expect(problemAt(problems, "$.skills.default.servers.crm.auth.grant").fix).toContain('connection: "team"');
    expect(problemAt(problems, "$.skills.default.servers.crm.auth.client_id_secret").message).toContain("needs `client_id_secret`");
    expect(problemAt(problems, "$.skills.default.servers.crm.auth.client_secret_secret").message).toContain("needs `client_secret_secret`");
    const unknown = problemsOf(withServers({ crm: { url: "https://crm.example/mcp", auth: { type: "oauth", grant: "password" } } }));
    expect(problemAt(unknown, "$.skills.default.servers.crm.auth.grant").message).toContain('"client_credentials"');
  });

  it("a pre-registered client may name its issuer and a token endpoint on another origin; both need the client id, and must be URLs", () => {
    const pinned = {
      type: "oauth",
      client_id_secret: "GH_ID",
      client_secret_secret: "GH_SECRET",
      issuer: "https://github.com/login/oauth",
      token_endpoint: "https://tokens.github.example/token",
    };
    const result = parseCatalog(withServers({ gh: { url: "https://gh.example/mcp", auth: pinned } }));
    expect(result.ok).toBe(true);
    if (result.ok) expect(result.catalog.skills.default?.servers.gh?.auth).toMatchObject({ issuer: pinned.issuer, token_endpoint: pinned.token_endpoint });

    const unpinned = problemsOf(
      withServers({ gh: { url: "https://gh.example/mcp", auth: { type: "oauth", issuer: "https://as.example", token_endpoint: "https://as.example/t" } } }),
    );
    for (const field of ["issuer", "token_endpoint"]) {
      const problem = problemAt(unpinned, `$.skills.default.servers.gh.auth.${field}`);
      expect(problem.message).toContain("pins a pre-registered client");
      expect(problem.fix).toContain("client_id_secret");
    }
    const notUrl = problemsOf(withServers({ gh: { url: "https://gh.example/mcp", auth: { ...pinned, issuer: "github" } } }));
    expect(problemAt(notUrl, "$.skills.default.servers.gh.auth.issuer")).toBeDefined();
  });
});
