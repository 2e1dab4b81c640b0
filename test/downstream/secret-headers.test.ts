import { env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import type { DownstreamServerConfig } from "../../src/catalog/catalog-schema";
import { DownstreamPool } from "../../src/downstream/downstream-pool";
import { redactDeep, redactSecretValues, referencedSecretNames, resolveSecretHeaders } from "../../src/downstream/secret-headers";
import { readFixtureStats } from "../fixtures/fixture-stats-client";
import { echoBase, serverConfig, uniqueSkill } from "./downstream-test-helpers";

const SECRET = "tok-5ecr3t-value-9f2c";

function envWith(extra: Record<string, string>): Env {
  return { ...env, ...extra };
}

async function kvValues(prefix: string): Promise<string[]> {
  const listed = await env.CACHE.list({ prefix });
  return Promise.all(listed.keys.map(async (key) => (await env.CACHE.get(key.name)) ?? ""));
}

describe("secret headers", () => {
  let open: DownstreamPool | undefined;
  afterEach(async () => {
    await open?.close();
  });

  it("resolves ${NAME} references from the Worker env", () => {
    const resolved = resolveSecretHeaders(
      "docs",
      { Authorization: "Bearer ${DOWNSTREAM_TOKEN}", "X-Pair": "${A_ONE}:${A_TWO}", "X-Plain": "static" },
      envWith({ DOWNSTREAM_TOKEN: SECRET, A_ONE: "1", A_TWO: "2" }),
    );
    expect(resolved.headers).toEqual({ Authorization: `Bearer ${SECRET}`, "X-Pair": "1:2", "X-Plain": "static" });
    expect(resolved.secretValues.sort()).toEqual(["1", "2", SECRET].sort());
    expect(referencedSecretNames({ a: "${A_ONE} ${A_TWO}", b: "${A_ONE}" })).toEqual(["A_ONE", "A_TWO"]);
  });

  it("a missing secret names the server and the secret and says how to set it", () => {
    let thrown: unknown;
    try {
      resolveSecretHeaders("docs", { Authorization: "Bearer ${NOT_SET_ANYWHERE}" }, env);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ kind: "missing-secret", serverId: "docs", secretName: "NOT_SET_ANYWHERE" });
    expect((thrown as Error).message).toContain('"docs"');
    expect((thrown as { fix: string }).fix).toContain("wrangler secret put NOT_SET_ANYWHERE");
    expect((thrown as { fix: string }).fix).toContain(".dev.vars");
  });

  it("sends the resolved value downstream, and only the configured headers", async () => {
    const base = echoBase("secret");
    const skill = uniqueSkill("secret");
    open = new DownstreamPool({
      env: envWith({ DOWNSTREAM_TOKEN: SECRET }),
      skill,
      servers: { docs: serverConfig({ url: `${base}/mcp`, headers: { Authorization: "Bearer ${DOWNSTREAM_TOKEN}" } }) },
    });
    await open.listTools("docs");
    await open.callTool("docs", "echo", { text: "hi" });
    const stats = await readFixtureStats(base);
    expect(stats.authorizations).toEqual([`Bearer ${SECRET}`]);

    // Neither the KV cache nor the health view holds the value.
    const values = await kvValues(`downstream-tools:${skill}:`);
    expect(values.length).toBe(1);
    for (const value of values) expect(value).not.toContain(SECRET);
    expect(JSON.stringify(open.states())).not.toContain(SECRET);
  });

  it("keeps the secret out of results and errors of a server that echoes it back", async () => {
    const base = echoBase("hostile");
    const headers = { Authorization: "Bearer ${DOWNSTREAM_TOKEN}" };
    open = new DownstreamPool({
      env: envWith({ DOWNSTREAM_TOKEN: SECRET }),
      skill: uniqueSkill("hostile"),
      servers: {
        echoing: serverConfig({ url: `${base}/mcp`, headers }),
        reflecting: serverConfig({ url: `${base}/reflect`, headers }),
      },
    });
    const result = await open.callTool("echoing", "whoami", {});
    expect(JSON.stringify(result)).toContain("you sent: Bearer [redacted]");
    expect(JSON.stringify(result)).not.toContain(SECRET);

    const error = await open.listTools("reflecting").catch((caught: unknown) => caught);
    expect(error).toMatchObject({ kind: "downstream-unavailable", serverId: "reflecting" });
    expect((await readFixtureStats(base)).authorizations).toEqual([`Bearer ${SECRET}`]);
    const text = `${(error as Error).message} ${(error as { fix: string }).fix} ${JSON.stringify(open.states())}`;
    expect(text).toContain("500");
    expect(text).toContain("denied for Bearer [redacted]");
    expect(text).not.toContain(SECRET);
  });

  it("sends no Authorization at all when none is configured", async () => {
    const base = echoBase("noauth");
    open = new DownstreamPool({ env, skill: uniqueSkill("noauth"), servers: { docs: serverConfig({ url: `${base}/mcp` }) } });
    await open.callTool("docs", "echo", { text: "hi" });
    const stats = await readFixtureStats(base);
    expect(stats.requests).toBeGreaterThan(0);
    expect(stats.authorizations).toEqual([]);
  });

  it("the pool reports a missing secret as the server being unavailable, with the secret's fix", async () => {
    const config: DownstreamServerConfig = serverConfig({
      url: `${echoBase("missing")}/mcp`,
      headers: { Authorization: "Bearer ${MISSING_DOWNSTREAM_TOKEN}" },
    });
    open = new DownstreamPool({ env, skill: uniqueSkill("missing"), servers: { docs: config } });
    const error = await open.callTool("docs", "echo", { text: "x" }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ kind: "downstream-unavailable", serverId: "docs" });
    expect((error as Error).message).toContain("MISSING_DOWNSTREAM_TOKEN");
    expect((error as { fix: string }).fix).toContain("wrangler secret put MISSING_DOWNSTREAM_TOKEN");
    expect(open.states().docs).toMatchObject({ status: "failed" });
  });

  it("scrubs secret values out of text from the server", () => {
    expect(redactSecretValues(`echo: Bearer ${SECRET}!`, [SECRET])).toBe("echo: Bearer [redacted]!");
    expect(redactDeep({ tools: [{ description: `uses ${SECRET}` }] }, (text) => redactSecretValues(text, [SECRET]))).toEqual({
      tools: [{ description: "uses [redacted]" }],
    });
  });

  it("copies only what held a secret: the rest of the value, and a value without one, comes back as given", () => {
    const redact = (text: string) => redactSecretValues(text, [SECRET]);
    const clean = { content: [{ type: "text", text: "no secret here" }], meta: { n: 1, list: [1, "two", null] } };
    expect(redactDeep(clean, redact)).toBe(clean);

    const untouched = { text: "plain" };
    const leaky = { [`key ${SECRET}`]: "v", nested: [untouched, { text: `token ${SECRET}` }], count: 3 };
    const result = redactDeep(leaky, redact);
    expect(result).toEqual({ "key [redacted]": "v", nested: [{ text: "plain" }, { text: "token [redacted]" }], count: 3 });
    // The input is left as it was; the untouched branch is shared, not copied.
    expect(leaky.nested[1]).toEqual({ text: `token ${SECRET}` });
    expect(result.nested[0]).toBe(untouched);
    expect(JSON.stringify(result)).not.toContain(SECRET);
  });
});
