import { SELF, env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { DownstreamPool } from "../../src/downstream/downstream-pool";
import { echoBase, serverConfig, uniqueSkill } from "../downstream/downstream-test-helpers";

/** Through the Worker's mounted admin API, as the loopback dev user (ENVIRONMENT=test, AUTH=none): the admin "dev". */
async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await SELF.fetch(`http://localhost/admin/api${path}`, {
    method,
    headers: { "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const changesOf = (body: Record<string, unknown>) =>
  (body.changes as Array<{ server: string; tool: string; pending: { hash: string; definition: { description?: string } } }>) ?? [];

describe("admin API: changed tool definitions", () => {
  const pools: DownstreamPool[] = [];
  afterEach(async () => {
    await Promise.all(pools.splice(0).map((open) => open.close()));
  });
  function listWith(skill: string, base: string, ttl: number): Promise<readonly { name: string; description?: string }[]> {
    const open = new DownstreamPool({ env, skill, servers: { echo: serverConfig({ url: `${base}/mcp`, tool_list_ttl_ms: ttl }) } });
    pools.push(open);
    return open.listTools("echo");
  }

  it("lists a pending change with both definitions and accepts it only with the reviewed hash", async () => {
    const base = echoBase("admin-pins");
    const skill = uniqueSkill("admin-pins");
    await listWith(skill, base, 0);
    expect(await call("GET", `/skills/${skill}/tool-changes`)).toEqual({ status: 200, body: { skill, changes: [] } });

    await (await fetch(`${base}/tools/mutate`, { method: "POST", body: JSON.stringify({ description: "New words." }) })).body?.cancel();
    expect((await listWith(skill, base, 300_000)).map((tool) => tool.name)).not.toContain("echo");

    const listed = await call("GET", `/skills/${skill}/tool-changes`);
    const [change] = changesOf(listed.body);
    expect(change).toMatchObject({
      server: "echo",
      tool: "echo",
      pinned: { definition: { description: "Returns the text it was given." } },
      pending: { definition: { description: "New words." } },
    });

    const accept = `/skills/${skill}/tool-changes/echo/echo/accept`;
    const stale = await call("POST", accept, { hash: "0".repeat(64) });
    expect(stale.status).toBe(409);
    expect(stale.body.error).toMatch(/changed again/);
    expect((await call("POST", accept, { hash: "nope" })).status).toBe(400);
    expect((await call("POST", `/skills/${skill}/tool-changes/echo/unknown/accept`, { hash: change!.pending.hash })).status).toBe(404);

    const accepted = await call("POST", accept, { hash: change!.pending.hash });
    // Both listings' keys (TTL 0 and 300 s): a TTL-0 listing is kept too, as the last known definitions.
    expect(accepted).toEqual({
      status: 200,
      body: { skill, server: "echo", tool: "echo", hash: change!.pending.hash, accepted: true, invalidatedCacheEntries: 2 },
    });
    expect((await call("POST", accept, { hash: change!.pending.hash })).status).toBe(409);
    expect(changesOf((await call("GET", `/skills/${skill}/tool-changes`)).body)).toEqual([]);
    // The cached list without echo is gone: a fresh session lists again and serves the accepted definition.
    const relisted = await listWith(skill, base, 300_000);
    expect(relisted.find((tool) => tool.name === "echo")?.description).toBe("New words.");
  });

  it("refuses a malformed skill or server name", async () => {
    expect((await call("GET", "/skills/Not_A_Skill/tool-changes")).status).toBe(400);
    expect((await call("POST", "/skills/docs/tool-changes/Bad__Id/echo/accept", { hash: "0".repeat(64) })).status).toBe(400);
  });
});
