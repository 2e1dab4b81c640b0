import { env } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { skillSchema } from "../../src/catalog/catalog-schema";
import { checkSkillHealth } from "../../src/admin/skill-health";
import type { ConnectionTarget } from "../../src/downstream/connections/connection-target";
import { readFixtureStats, taggedBase } from "../fixtures/fixture-stats-client";
import { uniqueSkill } from "../support/catalog-test-data";
import { storeConnection } from "../support/workers/stored-connection";

const fixtures = inject("fixtureServers");

function connectTeam(target: ConnectionTarget, accessToken: string): Promise<void> {
  return storeConnection(
    { kind: "team" },
    target,
    { access_token: accessToken, token_type: "Bearer" },
    { client: { client_id: "cid-health" }, connectedBy: "alice" },
  );
}

function health(skill: string, servers: Record<string, unknown>, internal: Record<string, string[]> = {}) {
  const config = skillSchema.parse({ servers, experts: [{ name: "ask", description: "d", provider: "google", internal_tools: internal }] });
  return checkSkillHealth(env, skill, 1, config, 10_000);
}

/**
 * Health probes of servers with `auth` (issue 19): a per-member server is probed without anyone's
 * credentials, and its 401 with a Bearer challenge is healthy ("needs each member's sign-in"),
 * never an error; a team server is probed with the team's token, and reported as not connected
 * (not as down) when the team has none.
 */
describe("health of servers with auth", () => {
  it("a per-member server that answers 401 with a Bearer challenge is reachable and ok: it needs each member's sign-in, and no credentials were sent", async () => {
    const base = taggedBase(fixtures.echo, "health-member");
    const answer = await health(
      uniqueSkill("health-member"),
      { mail: { url: `${base}/mcp-signin`, transport: "streamable-http", auth: { type: "oauth" } } },
      { mail: ["mailbox"] },
    );
    expect(answer.ok).toBe(true);
    expect(answer.servers).toEqual([
      expect.objectContaining({ server: "mail", ok: true, signIn: "needs-each-member", note: expect.stringContaining("needs each member's sign-in") }),
    ]);
    expect(answer.servers[0]?.error).toBeUndefined();
    const stats = await readFixtureStats(base);
    expect(stats.requests).toBe(1);
    expect(stats.authorizations).toEqual([]);
  });

  it("a per-member server that is down, answers 404, or refuses without saying how to sign in is failing and says why", async () => {
    const base = taggedBase(fixtures.echo, "health-member-down");
    const answer = await health(uniqueSkill("health-down"), {
      gone: { url: `${fixtures.dead}/mcp`, transport: "streamable-http", connect_timeout_ms: 2_000, auth: { type: "oauth" } },
      wrong: { url: `${base}/no-such-endpoint`, transport: "streamable-http", auth: { type: "oauth" } },
      bare: { url: `${base}/mcp-401-bare`, transport: "streamable-http", auth: { type: "oauth" } },
    });
    expect(answer.ok).toBe(false);
    const byServer = Object.fromEntries(answer.servers.map((server) => [server.server, server]));
    expect(byServer.gone).toMatchObject({
      ok: false,
      signIn: "needs-each-member",
      error: expect.stringContaining("probed without credentials, it is not reachable"),
    });
    expect(byServer.wrong).toMatchObject({ ok: false, error: "probed without credentials, it answered HTTP 404 to a request without credentials" });
    expect(byServer.bare).toMatchObject({ ok: false, error: expect.stringContaining("answered 401 without a Bearer challenge") });
  });

  it("a team server is probed with the team's token: its tools as the team's account, and missing whitelisted tools", async () => {
    const base = taggedBase(fixtures.echo, "health-team");
    const skill = uniqueSkill("health-team");
    const url = `${base}/mcp-signin`;
    await connectTeam({ serverId: "crm", skill, url, connection: "team" }, "tok-health-team.teamacct");
    const answer = await health(
      skill,
      { crm: { url, transport: "streamable-http", auth: { type: "oauth", connection: "team" } } },
      { crm: ["mailbox", "only_other"] },
    );
    expect(answer.servers).toEqual([
      expect.objectContaining({ server: "crm", ok: false, signIn: "team-connected", toolCount: 2, missingTools: [{ expert: "ask", tool: "only_other" }] }),
    ]);
    expect((await readFixtureStats(base)).authorizations).toEqual(["Bearer tok-health-team.teamacct"]);
    // The token the probe used is nowhere in its answer.
    expect(JSON.stringify(answer)).not.toContain("tok-health-team");
  });

  it("a team server nobody connected is reported as not connected for the team, and whether it is up", async () => {
    const base = taggedBase(fixtures.echo, "health-team-missing");
    const answer = await health(uniqueSkill("health-team-missing"), {
      crm: { url: `${base}/mcp-signin`, transport: "streamable-http", auth: { type: "oauth", connection: "team" } },
    });
    expect(answer.servers).toEqual([
      expect.objectContaining({
        server: "crm",
        ok: false,
        signIn: "team-not-connected",
        error: expect.stringMatching(
          /^not connected for the team: an admin connects it on the dashboard's Connections page \(the server is reachable, and asks for a sign-in\)$/,
        ),
      }),
    ]);
    expect((await readFixtureStats(base)).authorizations).toEqual([]);
  });
});
