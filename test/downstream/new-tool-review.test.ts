import { SELF, env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { replaceCatalog } from "../../src/catalog/catalog-service";
import { DownstreamPool } from "../../src/downstream/downstream-pool";
import { runExpert } from "../../src/experts/run/run-expert";
import { dashboardFetch, signInAs } from "../dashboard/dashboard-test-client";
import { makeExpert, makePolicy } from "../support/expert-fixture";
import { scriptedModel } from "../support/workers/scripted-model";
import { echoBase, serverConfig, uniqueSkill } from "./downstream-test-helpers";

/**
 * A service binding in front of the echo fixture that lists `search_docs` too, and
 * `search_exfil` once `added.value` is set (a server that grows a tool after it was first
 * listed); calls to either are served by echo. Answers in JSON.
 */
function growingServer(base: string, added: { value: boolean }): Fetcher {
  const extra = (name: string) => ({ name, description: `Searches (${name}).`, inputSchema: { type: "object", properties: { text: { type: "string" } } } });
  const fetcher = {
    fetch: async (input: RequestInfo | URL, init?: RequestInit) => {
      const request = new Request(input, init);
      let body = request.method === "POST" ? await request.text() : undefined;
      if (body !== undefined) body = body.replace(/"name":"search_(docs|exfil)"/, '"name":"echo"');
      const forwarded = new Request(`${base}${new URL(request.url).pathname}`, {
        method: request.method,
        headers: request.headers,
        ...(body === undefined ? {} : { body }),
      });
      const response = await fetch(forwarded);
      if (!(response.headers.get("content-type") ?? "").startsWith("text/event-stream")) return response;
      const message = JSON.parse(/^data: (.*)$/m.exec(await response.text())?.[1] ?? "{}") as { result?: { tools?: unknown[] } };
      if (Array.isArray(message.result?.tools)) {
        message.result.tools.push(extra("search_docs"), ...(added.value ? [extra("search_exfil")] : []));
      }
      return new Response(JSON.stringify(message), { status: response.status, headers: { "content-type": "application/json" } });
    },
  };
  return fetcher as unknown as Fetcher;
}

async function admin(method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await SELF.fetch(`http://localhost/admin/api${path}`, {
    method,
    headers: { "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe("a tool the server adds after its first listing", () => {
  const pools: DownstreamPool[] = [];
  afterEach(async () => {
    await Promise.all(pools.splice(0).map((open) => open.close()));
  });

  function poolOf(skill: string, base: string, added: { value: boolean }, server: Record<string, unknown> = {}): DownstreamPool {
    const open = new DownstreamPool({
      env: Object.assign({}, env, { GROWING: growingServer(base, added) }),
      skill,
      servers: { s: serverConfig({ binding: "GROWING", url: "https://growing.internal/mcp", transport: "streamable-http", tool_list_ttl_ms: 0, ...server }) },
    });
    pools.push(open);
    return open;
  }

  /** The tool names an expert allowing `search_*` offers its model, with the run's notes. */
  async function offered(open: DownstreamPool): Promise<string[]> {
    const model = scriptedModel([{ text: "done" }]);
    const result = await runExpert({
      expert: makeExpert({ internal_tools: { s: ["search_*"] } }),
      toolPolicy: makePolicy(),
      args: { query: "q" },
      model,
      tools: open,
    });
    expect(result.outcome).toBe("ok");
    return (model.doGenerateCalls[0]?.tools ?? []).map((tool) => tool.name).sort();
  }

  it("waits for review: not offered to the model until an admin accepts it, shown as new", async () => {
    const base = echoBase("new-tool");
    const skill = uniqueSkill("new-tool");
    const added = { value: false };
    // The first listing pins everything the server has.
    expect(await offered(poolOf(skill, base, added))).toEqual(["s__search_docs"]);
    expect((await admin("GET", `/skills/${skill}/tool-changes`)).body.changes).toEqual([]);

    added.value = true;
    const open = poolOf(skill, base, added);
    expect(await offered(open)).toEqual(["s__search_docs"]);
    expect(open.withheldTools("s")).toEqual([
      { name: "search_exfil", reason: "is new since the server's first listing and is withheld until an admin accepts it" },
    ]);
    await expect(open.callTool("s", "search_exfil", { text: "x" })).rejects.toMatchObject({ kind: "tool-withheld" });

    const listed = await admin("GET", `/skills/${skill}/tool-changes`);
    const changes = listed.body.changes as Array<{ tool: string; change: string; pinned: unknown; pending: { hash: string; definition: { name: string } } }>;
    expect(changes).toMatchObject([{ server: "s", tool: "search_exfil", change: "new", pinned: null, pending: { definition: { name: "search_exfil" } } }]);

    // The dashboard's review page shows it as a new tool, with no old side.
    const catalog = { skills: { [skill]: { servers: { s: { binding: "GROWING", url: "https://growing.internal/mcp" } }, experts: [] } } };
    expect((await replaceCatalog(env, catalog, "test")).ok).toBe(true);
    const page = await (await dashboardFetch(`/admin/servers?skill=${skill}`, { headers: { cookie: await signInAs("alice") } })).text();
    expect(page).toContain("New tool: <code>s__search_exfil</code>");
    expect(page).toContain("Accept new tool");
    expect(page).not.toContain("Pinned (old)");

    const accepted = await admin("POST", `/skills/${skill}/tool-changes/s/search_exfil/accept`, { hash: changes[0]?.pending.hash });
    expect(accepted).toMatchObject({ status: 200, body: { accepted: true } });
    expect(await offered(poolOf(skill, base, added))).toEqual(["s__search_docs", "s__search_exfil"]);
    expect((await admin("GET", `/skills/${skill}/tool-changes`)).body.changes).toEqual([]);
  });

  it("is offered at once on a server with auto_approve_new_tools", async () => {
    const base = echoBase("new-tool-auto");
    const skill = uniqueSkill("new-tool-auto");
    const added = { value: false };
    expect(await offered(poolOf(skill, base, added, { auto_approve_new_tools: true }))).toEqual(["s__search_docs"]);
    added.value = true;
    expect(await offered(poolOf(skill, base, added, { auto_approve_new_tools: true }))).toEqual(["s__search_docs", "s__search_exfil"]);
    expect((await admin("GET", `/skills/${skill}/tool-changes`)).body.changes).toEqual([]);
  });
});
