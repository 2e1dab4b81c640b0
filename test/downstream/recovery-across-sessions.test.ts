import { env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { checkSkillHealth } from "../../src/admin/skill-health";
import { skillSchema } from "../../src/catalog/catalog-schema";
import { serverConfigHash } from "../../src/downstream/config-hash";
import { DownstreamPool } from "../../src/downstream/downstream-pool";
import { downstreamUpKey } from "../../src/storage-keys";
import { readFixtureStats } from "../fixtures/fixture-stats-client";
import { waitFor } from "../support/wait-for";
import { echoBase, firstText, serverConfig, uniqueSkill } from "./downstream-test-helpers";

/** Long enough that no session's back-off runs out during the test: only a recovery mark can end it. */
const LONG_BACKOFF = { baseMs: 600_000, maxMs: 600_000, jitter: 0 };
const USERS = ["u-ann", "u-bob", "u-cid", "u-dan"];
/** Several pools connecting on a loaded machine: a bound on a hang, not on speed. */
const TEST_TIMEOUT_MS = 20_000;

/** The fixture's restartable server under this tag: started (same origin every time) or stopped. */
async function restartable(base: string, action: "start" | "stop"): Promise<string> {
  const response = await fetch(`${base}/restartable/${action}`, { method: "POST" });
  if (!response.ok) throw new Error(`restartable ${action}: HTTP ${response.status}`);
  if (action === "stop") return "";
  return ((await response.json()) as { origin: string }).origin;
}

/** env.CACHE, with every operation the pools make on it written down. */
function watchedKv(): { kv: KVNamespace; ops: string[] } {
  const ops: string[] = [];
  const kv = new Proxy(env.CACHE, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        ops.push(`${String(property)} ${String(args[0])}`);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { kv, ops };
}

/**
 * Issue 40.5: each user's session backs off from a failing server on its own, so after the
 * server's relaunch five of six users kept getting "unavailable" until their own back-off ran
 * out. A session that reaches the server again (or a health probe) now leaves a mark that ends
 * the back-off of every other session of the skill at its next call; a healthy call never reads it.
 */
describe("a downstream server back after an outage", () => {
  const pools: DownstreamPool[] = [];
  const tags: string[] = [];
  afterEach(async () => {
    await Promise.all(pools.splice(0).map((pool) => pool.close()));
    await Promise.all(tags.splice(0).map((base) => restartable(base, "stop")));
  });

  /** One pool per user, as each user's ExpertSession holds one, all warm on the restartable server. */
  async function sessionsOnRestartable(label: string) {
    const base = echoBase(label);
    tags.push(base);
    const origin = await restartable(base, "start");
    const skill = uniqueSkill(label);
    const config = serverConfig({ url: `${origin}/mcp`, transport: "streamable-http" });
    const watched = watchedKv();
    const sessions = USERS.map((userId) => new DownstreamPool({ env, skill, servers: { srv: config }, backoff: LONG_BACKOFF, userId, cache: watched.kv }));
    pools.push(...sessions);
    const warm = await Promise.all(sessions.map((session) => session.callTool("srv", "echo", { text: "warm" })));
    expect(warm.map(firstText)).toEqual(USERS.map(() => "warm"));
    return { base, skill, config, sessions, watched };
  }

  /** The server goes away: the first session fails once (retried at once next time), the others twice (backing off). */
  async function outage(base: string, sessions: DownstreamPool[]): Promise<void> {
    await restartable(base, "stop");
    const [first, ...others] = sessions;
    await expect(first?.callTool("srv", "echo", { text: "down" })).rejects.toMatchObject({ kind: "downstream-unavailable" });
    expect(first?.states().srv).toMatchObject({ status: "failed" });
    for (const session of others) {
      for (let attempt = 0; attempt < 2; attempt++) {
        await expect(session.callTool("srv", "echo", { text: "down" })).rejects.toMatchObject({ kind: "downstream-unavailable" });
      }
      expect(session.states().srv).toMatchObject({ status: "backing-off" });
    }
  }

  async function markWritten(skill: string, config: Parameters<typeof serverConfigHash>[0]): Promise<unknown> {
    const key = downstreamUpKey(skill, "srv", await serverConfigHash(config));
    return waitFor("the server's recovery mark", async () => (await env.CACHE.get(key)) ?? undefined);
  }

  it(
    "one user's success makes every other user's next call reach the server, and healthy calls never read the mark",
    async () => {
      const { base, skill, config, sessions, watched } = await sessionsOnRestartable("recover-user");
      // Warm and healthy: no KV operation at all on a call's path.
      watched.ops.length = 0;
      for (const session of sessions) expect(firstText(await session.callTool("srv", "echo", { text: "healthy" }))).toBe("healthy");
      expect(watched.ops).toEqual([]);

      await outage(base, sessions);
      await restartable(base, "start");
      const [first, ...others] = sessions;
      if (first === undefined) throw new Error("no sessions");
      const reached = (await readFixtureStats(base)).calls.echo ?? 0;
      // Back, but nobody has reached it yet: a backing-off session still waits (its one KV read found no mark).
      await expect(others[0]?.callTool("srv", "echo", { text: "too early" })).rejects.toThrow(/next attempt in/);
      expect((await readFixtureStats(base)).calls.echo ?? 0).toBe(reached);

      expect(firstText(await first.callTool("srv", "echo", { text: "back" }))).toBe("back");
      await markWritten(skill, config);
      for (const session of others) {
        expect(firstText(await session.callTool("srv", "echo", { text: "through" }))).toBe("through");
        expect(session.states().srv).toMatchObject({ status: "ready" });
      }
      expect((await readFixtureStats(base)).calls.echo).toBe(reached + 1 + others.length);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "a successful health probe ends the sessions' back-off too",
    async () => {
      const { base, skill, config, sessions } = await sessionsOnRestartable("recover-probe");
      const backingOff = sessions.slice(1);
      await outage(base, sessions);
      await restartable(base, "start");
      const skillConfig = skillSchema.parse({ servers: { srv: config }, experts: [] });
      expect((await checkSkillHealth(env, skill, 1, skillConfig, 10_000)).ok).toBe(true);
      await markWritten(skill, config);
      for (const session of backingOff) expect(firstText(await session.callTool("srv", "echo", { text: "after probe" }))).toBe("after probe");
    },
    TEST_TIMEOUT_MS,
  );
});
