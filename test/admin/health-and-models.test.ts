import { env } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { skillSchema } from "../../src/catalog/catalog-schema";
import { checkSkillHealth } from "../../src/admin/skill-health";
import { uniqueSkill } from "../support/catalog-test-data";
import { admin } from "./admin-test-client";

const fixtures = inject("fixtureServers");

describe("GET /skills/:skill/health", () => {
  it("connects to each server and reports latency, tool count, missing whitelisted tools and errors per server", async () => {
    const skill = uniqueSkill("health");
    await admin("PUT", `/skills/${skill}`, {
      servers: {
        echo: { url: `${fixtures.echo}/mcp`, transport: "streamable-http" },
        legacy: { url: `${fixtures.sseOnly}/sse`, transport: "sse" },
        gone: { url: `${fixtures.dead}/mcp`, transport: "streamable-http", connect_timeout_ms: 2_000 },
      },
      experts: [{ name: "ask", description: "d", provider: "google", internal_tools: { echo: ["echo", "no_such_tool"], legacy: ["echo"] } }],
    });
    const answer = await admin("GET", `/skills/${skill}/health`);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ skill, version: 1, ok: false });
    const byServer = Object.fromEntries((answer.body.servers as Array<{ server: string }>).map((server) => [server.server, server]));
    expect(byServer.echo).toMatchObject({
      ok: false,
      toolCount: expect.any(Number),
      latencyMs: expect.any(Number),
      transport: "streamable-http",
      missingTools: [{ expert: "ask", tool: "no_such_tool" }],
    });
    expect(byServer.legacy).toMatchObject({ ok: true, transport: "sse", toolCount: expect.any(Number) });
    expect(byServer.gone).toMatchObject({ ok: false, error: expect.stringContaining("gone") });
  });

  it("bounds the whole check: a server that never answers is reported as timed out", async () => {
    const config = skillSchema.parse({ servers: { stuck: { url: "https://stuck.example.com/mcp" } } });
    const never = () => new Promise<never>(() => undefined);
    // `never` does not answer, so a result at all means the check's own bound ended it.
    const health = await checkSkillHealth(env, "s", 1, config, 200, never);
    expect(health.servers).toMatchObject([{ server: "stuck", ok: false, error: "no answer within the health check's 200 ms" }]);
  });

  it("answers 404 for an unknown skill and 400 for a timeout out of range", async () => {
    expect((await admin("GET", `/skills/${uniqueSkill("nohealth")}/health`)).status).toBe(404);
    const skill = uniqueSkill("health-params");
    await admin("PUT", `/skills/${skill}`, {});
    expect((await admin("GET", `/skills/${skill}/health?timeout_ms=99999999`)).status).toBe(400);
  });
});

describe("GET /models", () => {
  it("reports each configured provider's usability without ever printing a key", async () => {
    const skill = uniqueSkill("models");
    await admin("PUT", `/skills/${skill}`, {
      experts: [
        { name: "wai", description: "d" },
        { name: "gem", description: "d", provider: "google" },
        { name: "local", description: "d", provider: "openai-compatible", base_url: `${fixtures.echo}/v1`, model: "m" },
        { name: "local2", description: "d", provider: "openai-compatible", base_url: `${fixtures.echo}/v1`, model: "m" },
        { name: "down", description: "d", provider: "openai-compatible", base_url: `${fixtures.dead}/v1`, model: "m" },
        { name: "keyed", description: "d", provider: "openai-compatible", base_url: `${fixtures.echo}/v1`, api_key_secret: "FIXTURE_TOKEN" },
        { name: "nokey", description: "d", provider: "openai-compatible", base_url: `${fixtures.echo}/v1`, api_key_secret: "MISSING_KEY" },
      ],
    });
    const answer = await admin("GET", `/models?skill=${skill}`);
    expect(answer.status).toBe(200);
    const models = answer.body.models as Array<{ experts: string[] }>;
    const of = (expert: string) => models.find((model) => model.experts.includes(`${skill}/${expert}`));
    expect(of("wai")).toMatchObject({ provider: "workers-ai", status: "unverified", detail: expect.stringContaining("remote") });
    expect(of("gem")).toMatchObject({ provider: "google", apiKeySecret: "GOOGLE_GENERATIVE_AI_API_KEY", keyPresent: false, status: "unusable" });
    expect(of("local")).toMatchObject({ status: "usable", endpointReachable: true, experts: [`${skill}/local`, `${skill}/local2`] });
    expect(of("down")).toMatchObject({ status: "unusable", endpointReachable: false });
    expect(of("keyed")).toMatchObject({ apiKeySecret: "FIXTURE_TOKEN", keyPresent: true, status: "usable" });
    expect(of("nokey")).toMatchObject({ keyPresent: false, status: "unusable", detail: expect.stringContaining("wrangler secret put MISSING_KEY") });
    expect(JSON.stringify(answer.body)).not.toContain("tok-fixture-5ecr3t-77"); // FIXTURE_TOKEN in vitest.config.ts
  });
});
