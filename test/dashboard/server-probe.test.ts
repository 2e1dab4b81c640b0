import { env } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { skillSchema } from "../../src/catalog/catalog-schema";
import { saveSkill } from "../../src/catalog/catalog-store";
import { readFixtureStats, taggedBase } from "../fixtures/fixture-stats-client";
import { uniqueSkill } from "../support/catalog-test-data";
import { csrfIn, dashboardFetch, form, signInAs } from "./dashboard-test-client";

const fixtures = inject("fixtureServers");

/** A skill whose one server is the echo fixture under a fresh tag, so its counters are this test's. */
async function skillOnFixture(): Promise<{ skill: string; base: string }> {
  const skill = uniqueSkill("probe");
  const base = taggedBase(fixtures.echo, "probe");
  const config = skillSchema.parse({
    servers: { fx: { url: `${base}/mcp`, transport: "streamable-http" } },
    experts: [{ name: "ask", description: "d", provider: "google", internal_tools: { fx: ["echo"] } }],
  });
  await saveSkill(env.DB, skill, config, { author: "seed" });
  return { skill, base };
}

describe("probing a skill's servers from the dashboard (issue 18, defect 9)", () => {
  it("connects to nothing on a GET, even with the old ?probe= link from another site", async () => {
    const { skill, base } = await skillOnFixture();
    const cookie = await signInAs("alice");
    const page = await dashboardFetch(`/admin/servers?probe=${skill}`, { headers: { cookie, "sec-fetch-site": "cross-site" } });
    expect(page.status).toBe(200);
    const text = await page.text();
    expect(text).not.toContain("Health (probed now)");
    expect(text).toContain(`<button type="submit">Probe ${skill}'s servers now</button>`);
    expect((await readFixtureStats(base)).requests).toBe(0);
  });

  it("refuses a POST without this session's form token, or from a member, and connects to nothing", async () => {
    const { skill, base } = await skillOnFixture();
    const alice = await signInAs("alice");
    expect((await dashboardFetch("/admin/servers/probe", form({ skill }, alice))).status).toBe(403);
    const otherSession = csrfIn(await (await dashboardFetch("/admin/servers", { headers: { cookie: await signInAs("alice") } })).text());
    expect((await dashboardFetch("/admin/servers/probe", form({ skill, csrf: otherSession }, alice))).status).toBe(403);
    expect((await dashboardFetch("/admin/servers/probe", form({ skill, csrf: "wrong" }, alice))).status).toBe(403);
    const bob = await signInAs("bob");
    const bobToken = csrfIn(await (await dashboardFetch("/admin", { headers: { cookie: bob } })).text());
    expect((await dashboardFetch("/admin/servers/probe", form({ skill, csrf: bobToken }, bob))).status).toBe(403);
    expect((await readFixtureStats(base)).requests).toBe(0);
  });

  it("probes on a POST with the form token and shows each server's health", async () => {
    const { skill, base } = await skillOnFixture();
    const cookie = await signInAs("alice");
    const csrf = csrfIn(await (await dashboardFetch("/admin/servers", { headers: { cookie } })).text());
    const probed = await dashboardFetch("/admin/servers/probe", form({ skill, csrf }, cookie));
    expect(probed.status).toBe(200);
    const text = await probed.text();
    expect(text).toContain("Health (probed now)");
    expect(text).toMatch(/<span class="ok">ok<\/span> in \d+ ms · \d+ tools/);
    expect((await readFixtureStats(base)).initialize).toBeGreaterThan(0);
    const unknown = await dashboardFetch("/admin/servers/probe", form({ skill: "no such skill!", csrf }, cookie));
    expect(unknown.status).toBe(400);
  });
});
