import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import type { UserProps } from "../../../src/auth/user-props";
import { type ConnectionOwner, type ConnectionTarget, connectionsStub } from "../../../src/downstream/connections/connection-target";
import { ConnectionRequiredError } from "../../../src/downstream/connections/connection-errors";
import { connectionTokenSource } from "../../../src/downstream/connections/token-source";
import { sessionStub } from "../../../src/experts/session/session-name";
import { readFixtureStats, taggedBase } from "../../fixtures/fixture-stats-client";
import { expertOf } from "../../support/workers/session-helpers";
import { useCatalogWithScriptedModels } from "../../support/workers/scripted-model";
import { storeConnection } from "../../support/workers/stored-connection";

const fixtures = inject("fixtureServers");
const skill = "connection-removal";
const memberBase = taggedBase(fixtures.echo, "removal-member");
const memberUrl = `${memberBase}/mcp`;
const teamUrl = `${taggedBase(fixtures.echo, "removal-team")}/mcp`;
const hana: UserProps = { userId: "u-hana", login: "hana", role: "member" };
const ivan: UserProps = { userId: "u-ivan", login: "ivan", role: "member" };

function connect(owner: ConnectionOwner, url: string, serverId: string, connection: "user" | "team"): Promise<void> {
  const tokens = { access_token: `acc-${crypto.randomUUID()}`, token_type: "Bearer", expires_in: 3600 };
  return storeConnection(owner, { serverId, skill, url, connection }, tokens, { client: { client_id: "cid-removal" }, connectedBy: "hana" });
}

/** Deletes the row behind the object's back (no holder is told): what a session's memo alone would still serve. */
async function dropRowOnly(owner: ConnectionOwner, url: string): Promise<void> {
  await runInDurableObject(connectionsStub(env, owner), async (_instance, state) => {
    state.storage.sql.exec(`DELETE FROM connections WHERE server_key = ?`, new URL(url).href);
  });
}

/**
 * A session keeps a connection's token in memory for up to TOKEN_MEMO_MS, so a warm call costs
 * no hop to UserConnections. Ending the connection (a member's Disconnect, an admin's removal,
 * a member removed from the team) must still stop its use on the very next call, in every
 * session that holds it: the removal tells them before it answers.
 */
describe("removing a connection reaches the sessions holding its token", () => {
  const models = useCatalogWithScriptedModels({
    skills: {
      [skill]: {
        servers: {
          mine: { url: memberUrl, transport: "streamable-http", auth: { type: "oauth" } },
          shared: { url: teamUrl, transport: "streamable-http", auth: { type: "oauth", connection: "team" } },
        },
        experts: [expertOf("uses_mine", { mine: ["echo"] }), expertOf("uses_shared", { shared: ["echo"] })],
      },
    },
  });

  async function call(user: UserProps, expert: "uses_mine" | "uses_shared") {
    const server = expert === "uses_mine" ? "mine" : "shared";
    models.play([{ calls: [{ name: `${server}__echo`, input: { text: user.login } }] }, { text: `Echoed for ${user.login}.` }]);
    return sessionStub(env, skill, user.userId).callExpert({ runId: crypto.randomUUID(), skill, expert, args: { query: "q" }, user });
  }

  it("a warm session reuses the token without asking again; removing the member's connections makes its next call ask them to connect", async () => {
    const owner: ConnectionOwner = { kind: "user", userId: hana.userId };
    await connect(owner, memberUrl, "mine", "user");
    expect(await call(hana, "uses_mine")).toMatchObject({ outcome: "ok", text: "Echoed for hana." });
    expect((await readFixtureStats(memberBase)).lastAuthorization).toMatch(/^Bearer acc-/);

    // The memo at work: with the row gone but nobody told, the session still has the token.
    await dropRowOnly(owner, memberUrl);
    expect(await call(hana, "uses_mine")).toMatchObject({ outcome: "ok" });

    await connect(owner, memberUrl, "mine", "user");
    const echoesBefore = (await readFixtureStats(memberBase)).calls.echo;
    // As when the member is removed from the team (their object ends every connection).
    expect(await connectionsStub(env, owner).removeAll()).toBe(1);
    // With no connection left the run goes to sign the member in, which this fixture (no OAuth
    // metadata) cannot offer: the error says so, where a kept memo would have answered "ok".
    const refused = await call(hana, "uses_mine");
    expect(refused).toMatchObject({ outcome: "error", text: expect.stringContaining('Downstream server "mine" cannot be connected') });
    // Refused before the tool: the server saw no call with the removed token.
    expect((await readFixtureStats(memberBase)).calls.echo).toBe(echoesBefore);
  });

  it("removing the team's connection reaches every member's session that holds it", async () => {
    const team: ConnectionOwner = { kind: "team" };
    await connect(team, teamUrl, "shared", "team");
    for (const member of [hana, ivan]) expect(await call(member, "uses_shared")).toMatchObject({ outcome: "ok" });

    // As the dashboard's Disconnect does. The team's object is one per tenant, shared with other files here: remove this server only.
    expect(await connectionsStub(env, team).remove(teamUrl)).toBe(true);
    for (const member of [hana, ivan]) {
      const refused = await call(member, "uses_shared");
      expect(refused, member.login).toMatchObject({ outcome: "error", text: expect.stringContaining('Downstream server "shared" cannot be connected') });
    }
  });

  it("a token that arrives after its session was told to forget is used once, not kept", async () => {
    const owner: ConnectionOwner = { kind: "user", userId: "u-kim" };
    await connect(owner, memberUrl, "mine", "user");
    const source = connectionTokenSource(env, { serverId: "mine", skill, url: memberUrl, connection: "user" }, owner.userId);
    const asked = source.token();
    // The removal's word reaches the session while its request for the token is still out.
    source.forget?.();
    expect(await asked).toMatch(/^acc-/);
    await dropRowOnly(owner, memberUrl);
    await expect(source.token()).rejects.toBeInstanceOf(ConnectionRequiredError);
  });

  it("a holder id that names no session does not stop the removal", async () => {
    const owner: ConnectionOwner = { kind: "user", userId: "u-jo" };
    const stub = connectionsStub(env, owner);
    await connect(owner, memberUrl, "mine", "user");
    const target: ConnectionTarget = { serverId: "mine", skill, url: memberUrl, connection: "user" };
    expect(await stub.accessToken(target, undefined, "not-a-durable-object-id")).toMatchObject({ token: expect.stringMatching(/^acc-/) });
    expect(await stub.remove(memberUrl)).toBe(true);
    expect(await stub.status(memberUrl)).toBeNull();
  });
});
