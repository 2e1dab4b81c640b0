import { env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { expertSchema } from "../../../src/catalog/catalog-schema";
import { DownstreamPool } from "../../../src/downstream/downstream-pool";
import { cachedListings } from "../../../src/experts/tools/expert-tool-annotations";
import type { TokenSource } from "../../../src/downstream/connections/token-source";
import { readFixtureStats } from "../../fixtures/fixture-stats-client";
import { echoBase, serverConfig, uniqueSkill } from "../downstream-test-helpers";

/** A member's token for the accounts fixture: its last part names the account the server answers as. */
function tokenOf(account: string): TokenSource {
  return { token: async () => `tok-${crypto.randomUUID()}.${account}` };
}

/**
 * A server with `auth` answers as the account whose token it got, and may list different tools
 * (names, descriptions, schemas) to different accounts. Sessions of one skill share KV: a listing
 * made with one member's token must never be served to another member.
 */
describe("tool lists of servers with auth, per account", () => {
  const pools: DownstreamPool[] = [];
  afterEach(async () => {
    await Promise.all(pools.splice(0).map((open) => open.close()));
  });

  function session(skill: string, url: string, userId: string | undefined, account: string, connection: "user" | "team" = "user"): DownstreamPool {
    const open = new DownstreamPool({
      env,
      skill,
      servers: { mail: serverConfig({ url, transport: "streamable-http", auth: { type: "oauth", connection } }) },
      ...(userId === undefined ? {} : { userId }),
      toolPins: false,
      tokenSource: () => tokenOf(account),
    });
    pools.push(open);
    return open;
  }

  const names = (tools: readonly { name: string }[]) => tools.map((tool) => tool.name).sort();

  it("two members connected as different accounts each see only their own account's tools, from a cold and a warm cache", async () => {
    const base = echoBase("accounts-user");
    const url = `${base}/mcp-accounts`;
    const skill = uniqueSkill("accounts");
    const alice = await session(skill, url, "u-alice", "alice").listTools("mail");
    expect(names(alice)).toEqual(["mailbox", "only_alice"]);
    expect(alice.find((tool) => tool.name === "mailbox")?.description).toBe("The mailbox of alice.");

    // Bob's session of the same skill starts after alice's listing was cached.
    const bob = await session(skill, url, "u-bob", "bob").listTools("mail");
    expect(names(bob)).toEqual(["mailbox", "only_bob"]);
    expect(JSON.stringify(bob)).not.toContain("alice");

    // A fresh session of each reads its own account's cached listing, asking the server nothing.
    const listedBefore = (await readFixtureStats(base)).toolsList;
    expect(names(await session(skill, url, "u-alice", "alice").listTools("mail"))).toEqual(["mailbox", "only_alice"]);
    expect(names(await session(skill, url, "u-bob", "bob").listTools("mail"))).toEqual(["mailbox", "only_bob"]);
    expect((await readFixtureStats(base)).toolsList).toBe(listedBefore);
  });

  it("a user id cannot name another member's or the team's cache entry", async () => {
    const base = echoBase("accounts-forge");
    const url = `${base}/mcp-accounts`;
    const skill = uniqueSkill("forge");
    await session(skill, url, undefined, "team", "team").listTools("mail");
    await session(skill, url, "u:carol", "carol").listTools("mail");
    expect(names(await session(skill, url, "team", "mallory").listTools("mail"))).toEqual(["mailbox", "only_mallory"]);
    expect(names(await session(skill, url, "u", "mallory2").listTools("mail"))).toEqual(["mailbox", "only_mallory2"]);
  });

  it("a team connection acts as one account for every member: its listing is shared between them", async () => {
    const base = echoBase("accounts-team");
    const url = `${base}/mcp-accounts`;
    const skill = uniqueSkill("team");
    expect(names(await session(skill, url, "u-alice", "teamacct", "team").listTools("mail"))).toEqual(["mailbox", "only_teamacct"]);
    expect(names(await session(skill, url, "u-bob", "teamacct", "team").listTools("mail"))).toEqual(["mailbox", "only_teamacct"]);
    expect((await readFixtureStats(base)).toolsList).toBe(1);
  });

  it("a session whose member is not known lists for itself and shares nothing", async () => {
    const base = echoBase("accounts-unknown");
    const url = `${base}/mcp-accounts`;
    const skill = uniqueSkill("unknown");
    expect(names(await session(skill, url, undefined, "dave").listTools("mail"))).toEqual(["mailbox", "only_dave"]);
    expect(names(await session(skill, url, undefined, "erin").listTools("mail"))).toEqual(["mailbox", "only_erin"]);
    expect(names(await session(skill, url, "u-frank", "frank").listTools("mail"))).toEqual(["mailbox", "only_frank"]);
  });

  it("an expert's annotations never come from one member's listing of a server with auth", async () => {
    const base = echoBase("accounts-annotations");
    const url = `${base}/mcp-accounts`;
    const skill = uniqueSkill("annotations");
    const servers = { mail: serverConfig({ url, transport: "streamable-http", auth: { type: "oauth" } }) };
    await session(skill, url, "u-alice", "alice").listTools("mail");
    const experts = [expertSchema.parse({ name: "ask", description: "d", provider: "google", internal_tools: { mail: ["mailbox"] } })];
    expect((await cachedListings(env.CACHE, skill, servers, experts)).get("mail")).toBeUndefined();
  });
});
