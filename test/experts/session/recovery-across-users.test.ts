import { env } from "cloudflare:test";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { UserProps } from "../../../src/auth/user-props";
import { replaceCatalog } from "../../../src/catalog/catalog-service";
import { setDefaultBackoffForTests } from "../../../src/downstream/connection-backoff";
import { setModelResolverForTests } from "../../../src/experts/models/model-resolver-override";
import { readFixtureStats, taggedBase } from "../../fixtures/fixture-stats-client";
import { toResult } from "../../support/workers/scripted-model";
import { callOf, expertOf, sessionOf } from "../../support/workers/session-helpers";
import { MockLanguageModelV4 } from "ai/test";

const fixtures = inject("fixtureServers");
const skill = "recovery-users";
const base = taggedBase(fixtures.echo, "recovery-users");
const users: UserProps[] = ["ann", "bob", "cid", "dan"].map((login) => ({ userId: `u-rec-${login}`, login, role: "member" }));
const [ann, ...others] = users as [UserProps, ...UserProps[]];

async function restartable(action: "start" | "stop"): Promise<string> {
  const response = await fetch(`${base}/restartable/${action}`, { method: "POST" });
  if (!response.ok) throw new Error(`restartable ${action}: HTTP ${response.status}`);
  return action === "start" ? ((await response.json()) as { origin: string }).origin : "";
}

/** Calls `srv__echo` once, then answers with what it got back (or with the failure it read). */
const echoOnce = new MockLanguageModelV4({
  doGenerate: async (options) => {
    const toolTurn = options.prompt.find((message) => message.role === "tool");
    if (toolTurn === undefined) return toResult({ calls: [{ name: "srv__echo", input: { text: "ping" } }] });
    return toResult({ text: `the tool answered: ${JSON.stringify(toolTurn.content).slice(0, 200)}` });
  },
});

/**
 * Issue 40.5, through the users' own ExpertSessions: each backs off from a failed server on its
 * own. After the relaunch, one user's call reaches the server, and every other user's next call
 * goes through without waiting out its back-off (held at 10 minutes here, so nothing else ends
 * it). During the outage each answer says, in `unavailable`, which tool could not be reached.
 */
describe("users' sessions after a downstream outage", () => {
  beforeAll(async () => {
    const origin = await restartable("start");
    const catalog = {
      skills: { [skill]: { servers: { srv: { url: `${origin}/mcp`, transport: "streamable-http" } }, experts: [expertOf("ask", { srv: ["echo"] })] } },
    };
    expect((await replaceCatalog(env, catalog, "test")).ok).toBe(true);
    setModelResolverForTests(() => echoOnce);
    setDefaultBackoffForTests({ baseMs: 600_000, maxMs: 600_000, jitter: 0 });
  });
  afterAll(async () => {
    setModelResolverForTests(undefined);
    setDefaultBackoffForTests(undefined);
    await restartable("stop");
  });

  const ask = (user: UserProps) => sessionOf(skill, user).callExpert(callOf(skill, "ask", "ping the server", {}, user));
  const echoCalls = async () => (await readFixtureStats(base)).calls.echo ?? 0;

  it("one user's success ends every other user's back-off; the outage's answers name the unavailable tool", async () => {
    for (const user of users) expect(await ask(user)).toMatchObject({ outcome: "ok", text: expect.stringContaining("ping") });
    expect(await echoCalls()).toBe(users.length);

    await restartable("stop");
    // ann fails once (a single failure is retried at once); the others twice, so they back off.
    const down = [await ask(ann)];
    for (const user of others) down.push(await ask(user), await ask(user));
    for (const result of down) {
      expect(result).toMatchObject({ outcome: "ok", unavailable: [{ server: "srv", tool: "echo", reason: expect.any(String) }] });
    }
    for (const user of others) expect((await sessionOf(skill, user).connectionStates()).srv).toMatchObject({ status: "backing-off" });

    await restartable("start");
    const reached = await echoCalls();
    expect(await ask(ann)).toMatchObject({ outcome: "ok", text: expect.stringContaining("ping") });
    expect(await echoCalls()).toBe(reached + 1);
    for (const user of others) {
      const result = await ask(user);
      expect(result).toMatchObject({ outcome: "ok", text: expect.stringContaining("ping") });
      expect(result.unavailable).toBeUndefined();
    }
    expect(await echoCalls()).toBe(reached + 1 + others.length);
  }, 30_000);
});
