import { env } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { skillSchema } from "../../src/catalog/catalog-schema";
import { saveSkill } from "../../src/catalog/catalog-store";
import type { StoredTokens } from "../../src/downstream/connections/connection-schema";
import { connectionsStub, type ConnectionOwner, type ConnectionTarget } from "../../src/downstream/connections/connection-target";
import { taggedBase } from "../fixtures/fixture-stats-client";
import { uniqueSkill } from "../support/catalog-test-data";
import { storeConnection } from "../support/workers/stored-connection";
import { csrfIn, dashboardFetch, form, signInAs } from "./dashboard-test-client";

const fixtures = inject("fixtureServers");

const TEAM_ACCESS = "acc-team-5c0f1d9e-access-token";
const TEAM_REFRESH = "ref-team-8a2b7c61-refresh-token";
const MEMBER_ACCESS = "acc-member-4e9d3a10-access-token";
const CLIENT_SECRET = "cs-dash-77e1-client-secret";

function seed(owner: ConnectionOwner, target: ConnectionTarget, tokens: StoredTokens, by: string): Promise<void> {
  return storeConnection(owner, target, tokens, {
    client: { client_id: "cid-dash", client_secret: CLIENT_SECRET },
    connectedBy: by,
    connectedAt: Date.UTC(2026, 10, 20, 9, 30),
  });
}

/** A skill with a team-connected server (`crm`) and a per-member one (`mail`), on unique URLs. */
async function skillWithAuthServers(): Promise<{ skill: string; crmUrl: string; mailUrl: string }> {
  const skill = uniqueSkill("conn-page");
  const crmUrl = `https://crm-${skill}.example/mcp`;
  const mailUrl = `https://mail-${skill}.example/mcp`;
  const config = skillSchema.parse({
    servers: {
      crm: { url: crmUrl, transport: "streamable-http", auth: { type: "oauth", connection: "team" } },
      mail: { url: mailUrl, transport: "streamable-http", auth: { type: "oauth", scopes: ["mail.read"] } },
    },
    experts: [{ name: "ask", description: "d", provider: "google", internal_tools: { crm: ["search"], mail: ["inbox"] } }],
  });
  await saveSkill(env.DB, skill, config, { author: "seed" });
  return { skill, crmUrl, mailUrl };
}

function sectionOf(page: string, server: string, skill: string): string {
  const start = page.indexOf(`<strong>${server}</strong> <span class="muted">in ${skill}</span>`);
  if (start < 0) throw new Error(`no row of ${server} in ${skill}`);
  return page.slice(start, page.indexOf("</tr>", start));
}

describe("dashboard Connections page (issue 19)", () => {
  it("says a team connection makes every member act as one account, who connected it and when; counts members per server; shows no token", async () => {
    const { skill, crmUrl, mailUrl } = await skillWithAuthServers();
    const alice = await signInAs("alice");
    await signInAs("bob");
    await seed(
      { kind: "team" },
      { serverId: "crm", skill, url: crmUrl, connection: "team" },
      { access_token: TEAM_ACCESS, refresh_token: TEAM_REFRESH, token_type: "Bearer", expires_in: 3600, scope: "crm.all" },
      "alice",
    );
    await seed(
      { kind: "user", userId: "dev-bob" },
      { serverId: "mail", skill, url: mailUrl, connection: "user" },
      { access_token: MEMBER_ACCESS, token_type: "Bearer" },
      "bob",
    );

    const response = await dashboardFetch("/admin/connections", { headers: { cookie: alice } });
    expect(response.status).toBe(200);
    const page = await response.text();
    expect(page).toContain('<a href="/admin/connections" aria-current="page">Connections</a>');
    expect(page).toContain("every member's expert calls act as the account an admin connected");
    const crm = sectionOf(page, "crm", skill);
    expect(crm).toContain("every member acts as the account <strong>alice</strong> signed in with, since 2026-11-20 09:30:00 UTC");
    expect(crm).toContain("crm.all");
    expect(crm).toContain('aria-label="Disconnect crm for the team"');
    const mail = sectionOf(page, "mail", skill);
    expect(mail).toContain("1 member connected");
    expect(mail).toContain("mail.read");
    for (const secret of [TEAM_ACCESS, TEAM_REFRESH, MEMBER_ACCESS, CLIENT_SECRET, "access_token", "refresh_token"]) expect(page).not.toContain(secret);
  });

  it("a member gets the Admins only page, and cannot connect or disconnect the team's account", async () => {
    const { skill, crmUrl } = await skillWithAuthServers();
    await seed({ kind: "team" }, { serverId: "crm", skill, url: crmUrl, connection: "team" }, { access_token: TEAM_ACCESS, token_type: "Bearer" }, "alice");
    const bob = await signInAs("bob");
    const page = await dashboardFetch("/admin/connections", { headers: { cookie: bob } });
    expect(page.status).toBe(403);
    const text = await page.text();
    expect(text).toContain("<h1>Admins only</h1>");
    expect(text).not.toContain(crmUrl);
    const csrf = csrfIn(text);
    expect((await dashboardFetch("/admin/connections/team/disconnect", form({ csrf, server: crmUrl }, bob))).status).toBe(403);
    expect((await dashboardFetch("/admin/connections/team/connect", form({ csrf, skill, server: "crm" }, bob))).status).toBe(403);
    expect(await connectionsStub(env, { kind: "team" }).status(crmUrl)).not.toBeNull();
  });

  it("disconnects the team's account only with this session's form token", async () => {
    const { skill, crmUrl } = await skillWithAuthServers();
    await seed({ kind: "team" }, { serverId: "crm", skill, url: crmUrl, connection: "team" }, { access_token: TEAM_ACCESS, token_type: "Bearer" }, "alice");
    const alice = await signInAs("alice");
    expect((await dashboardFetch("/admin/connections/team/disconnect", form({ server: crmUrl }, alice))).status).toBe(403);
    expect(await connectionsStub(env, { kind: "team" }).status(crmUrl)).not.toBeNull();

    const csrf = csrfIn(await (await dashboardFetch("/admin/connections", { headers: { cookie: alice } })).text());
    const ended = await dashboardFetch("/admin/connections/team/disconnect", form({ csrf, server: crmUrl }, alice));
    expect(ended.status).toBe(303);
    expect(ended.headers.get("location")).toBe(`/admin/connections?ended=${encodeURIComponent(new URL(crmUrl).host)}`);
    expect(await connectionsStub(env, { kind: "team" }).status(crmUrl)).toBeNull();
    const after = await (await dashboardFetch("/admin/connections", { headers: { cookie: alice } })).text();
    expect(sectionOf(after, "crm", skill)).toContain("Not connected");
    expect(sectionOf(after, "crm", skill)).toContain('aria-label="Connect crm for the team"');
  });

  it("connects only a server with a team connection; one serving no OAuth metadata is named, with what it lacks", async () => {
    const skill = uniqueSkill("conn-bare");
    const base = taggedBase(fixtures.echo, "conn-bare");
    const config = skillSchema.parse({
      servers: {
        bare: { url: `${base}/mcp`, transport: "streamable-http", auth: { type: "oauth", connection: "team" } },
        mine: { url: `${base}/mcp-accounts`, transport: "streamable-http", auth: { type: "oauth" } },
      },
      experts: [{ name: "ask", description: "d", provider: "google", internal_tools: { bare: ["echo"] } }],
    });
    await saveSkill(env.DB, skill, config, { author: "seed" });
    const alice = await signInAs("alice");
    const csrf = csrfIn(await (await dashboardFetch("/admin/connections", { headers: { cookie: alice } })).text());
    const perMember = await dashboardFetch("/admin/connections/team/connect", form({ csrf, skill, server: "mine" }, alice));
    expect(perMember.status).toBe(404);
    const bare = await dashboardFetch("/admin/connections/team/connect", form({ csrf, skill, server: "bare" }, alice));
    expect(bare.status).toBe(502);
    await expect(bare.text()).resolves.toContain("bare cannot be connected: it serves no OAuth metadata");
  });

  it("hostile input: a connector's name with markup is text, and a form naming no URL, an oversized one or another skill's server does nothing", async () => {
    const { skill, crmUrl } = await skillWithAuthServers();
    await seed(
      { kind: "team" },
      { serverId: "crm", skill, url: crmUrl, connection: "team" },
      { access_token: TEAM_ACCESS, token_type: "Bearer" },
      "<script>alert(1)</script>",
    );
    const alice = await signInAs("alice");
    const page = await (await dashboardFetch("/admin/connections", { headers: { cookie: alice } })).text();
    expect(sectionOf(page, "crm", skill)).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(page).not.toContain("<script>alert(1)");
    const csrf = csrfIn(page);
    for (const server of ["not a url", `https://x.example/${"a".repeat(5_000)}`]) {
      expect((await dashboardFetch("/admin/connections/team/disconnect", form({ csrf, server }, alice))).status).toBe(400);
    }
    expect((await dashboardFetch("/admin/connections/team/connect", form({ csrf, skill: "../etc", server: "crm" }, alice))).status).toBe(400);
    expect((await dashboardFetch("/admin/connections/team/connect", form({ csrf, skill: uniqueSkill("none"), server: "crm" }, alice))).status).toBe(404);
    expect(await connectionsStub(env, { kind: "team" }).status(crmUrl)).not.toBeNull();
  });
});
