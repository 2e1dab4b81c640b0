import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { inject } from "vitest";
import type { UserProps } from "../../../src/auth/user-props";
import type { ExpertCallRequest } from "../../../src/experts/core/call-types";
import { sessionStub } from "../../../src/experts/session/session-name";
import { readFixtureStats, taggedBase } from "../../fixtures/fixture-stats-client";
import type { MockLanguageModelV4 } from "ai/test";
import { expertOf } from "../../support/workers/session-helpers";
import { useCatalogWithScriptedModels } from "../../support/workers/scripted-model";

const SECRET = "tok-fixture-5ecr3t-77"; // FIXTURE_TOKEN in vitest.config.ts
const fixtures = inject("fixtureServers");
const echo = taggedBase(fixtures.echo, "session");
const skill = "session-tests";

const alice: UserProps = { userId: "u-alice", login: "alice", role: "member" };
const bob: UserProps = { userId: "u-bob", login: "bob", role: "member" };

function session(user: UserProps) {
  return sessionStub(env, skill, user.userId);
}

function call(user: UserProps, expert: string, extra: Partial<ExpertCallRequest> = {}): ExpertCallRequest {
  return { runId: crypto.randomUUID(), skill, expert, args: { query: "echo something" }, user, ...extra };
}

describe("ExpertSession", () => {
  const models = useCatalogWithScriptedModels({
    skills: {
      [skill]: {
        servers: {
          echo: { url: `${echo}/mcp`, transport: "streamable-http", headers: { Authorization: "Bearer ${FIXTURE_TOKEN}" } },
          gone: { url: `${fixtures.dead}/mcp`, transport: "streamable-http", connect_timeout_ms: 1000 },
        },
        experts: [
          expertOf("echoer", { echo: ["echo"] }),
          expertOf("echoer_too", { echo: ["echo"] }),
          { ...expertOf("forgetful", { echo: ["echo"] }), history: { max_messages: 2 } },
          expertOf("needs_gone", { gone: ["echo"] }),
        ],
      },
    },
  });

  let model: MockLanguageModelV4;
  afterEach(() => vi.restoreAllMocks());

  it("never stores or logs the resolved secret of a downstream header", async () => {
    const lines: string[] = [];
    for (const method of ["log", "info", "warn", "error"] as const) {
      vi.spyOn(console, method).mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(" ")));
    }
    model = models.play([{ calls: [{ name: "echo__echo", input: { text: "hello" } }] }, { text: "Echoed hello." }]);
    const result = await session(alice).callExpert(call(alice, "echoer"));
    expect(result).toMatchObject({ outcome: "ok", text: "Echoed hello." });
    // The secret did reach the downstream server, which is the only place it may go.
    expect((await readFixtureStats(echo)).authorizations).toContain(`Bearer ${SECRET}`);

    const sessionRows = await runInDurableObject(session(alice), (_instance, state) =>
      ["runs", "run_steps", "threads", "thread_turns"].flatMap((table) =>
        state.storage.sql
          .exec(`SELECT * FROM ${table}`)
          .toArray()
          .map((row) => JSON.stringify(row)),
      ),
    );
    const d1Rows = await env.DB.prepare("SELECT * FROM catalog_versions").all();
    const kv = await env.CACHE.list();
    const kvValues = await Promise.all(kv.keys.map((key) => env.CACHE.get(key.name)));
    const everything = [...sessionRows, JSON.stringify(d1Rows.results), ...kvValues, ...lines].join("\n");
    expect(sessionRows.length).toBeGreaterThan(2);
    expect(everything).not.toContain(SECRET);
    expect(everything).toContain("${FIXTURE_TOKEN}");
  });

  it("records every step of a run with its outcome", async () => {
    model = models.play([{ calls: [{ name: "echo__echo", input: { text: "a" } }] }, { text: "Done." }]);
    const request = call(alice, "echoer");
    await session(alice).callExpert(request);
    const run = await session(alice).run(request.runId);
    expect(run).toMatchObject({ outcome: "ok", expert: "echoer", userId: "u-alice", catalogVersion: expect.any(Number) });
    // A run that opens a conversation names its new thread.
    expect(run?.threadId).toMatch(/^th_/);
    expect(run?.usage).toMatchObject({ steps: 2, toolCalls: 1 });
    const steps = await runInDurableObject(session(alice), (_instance, state) =>
      state.storage.sql.exec<{ step: number; tool_calls: string }>("SELECT step, tool_calls FROM run_steps WHERE run_id = ?", request.runId).toArray(),
    );
    expect(steps).toHaveLength(2);
    expect(steps[0]?.tool_calls).toContain("echo__echo");
  });

  it("refuses a thread handle in another user's session", async () => {
    model = models.play([{ text: "Alice's answer." }]);
    const first = await session(alice).callExpert(call(alice, "echoer"));
    expect(first.thread).toMatch(/^th_/);
    model = models.play([{ text: "must not run" }]);
    const request = call(bob, "echoer", { thread: first.thread });
    const stolen = await session(bob).callExpert(request);
    expect(stolen.outcome).toBe("error");
    expect(stolen.text).toContain(`Thread ${first.thread} does not exist`);
    expect(model.doGenerateCalls).toHaveLength(0);
    // The refused handle is not handed back as if it were Bob's thread, nor stored in his records.
    expect(stolen.thread).toBeUndefined();
    expect(await session(bob).run(request.runId)).toMatchObject({ outcome: "error", threadId: null });
  });

  it("refuses a thread handle started by another expert of the skill, before any model call", async () => {
    model = models.play([{ calls: [{ name: "echo__echo", input: { text: "private" } }] }, { text: "Echoer's answer." }]);
    const first = await session(alice).callExpert(call(alice, "echoer"));
    expect(first.thread).toMatch(/^th_/);
    model = models.play([{ text: "must not run" }]);
    const request = call(alice, "echoer_too", { thread: first.thread });
    const crossed = await session(alice).callExpert(request);
    expect(crossed.outcome).toBe("error");
    expect(crossed.text).toContain(`Thread ${first.thread} belongs to expert "echoer", not "echoer_too"`);
    // The other expert's model never saw the first expert's history or tool results.
    expect(model.doGenerateCalls).toHaveLength(0);
    expect(crossed.thread).toBeUndefined();
    expect(await session(alice).run(request.runId)).toMatchObject({ outcome: "error", threadId: null });
  });

  it("keeps each thread within its expert's catalog history bounds", async () => {
    models.play([{ text: "First answer." }]);
    const first = await session(alice).callExpert(call(alice, "forgetful", { args: { query: "first question" } }));
    const followUp = models.play([{ text: "Second answer." }]);
    await session(alice).callExpert(call(alice, "forgetful", { args: { query: "second question" }, thread: first.thread }));
    // The follow-up still saw the first turn (2 messages fit); after it, only the newest 2 remain.
    expect(JSON.stringify(followUp.doGenerateCalls[0]?.prompt)).toContain("first question");
    const kept = await runInDurableObject(session(alice), (_instance, state) =>
      state.storage.sql.exec<{ message: string }>("SELECT message FROM thread_turns WHERE thread_id = ? ORDER BY seq", first.thread ?? "").toArray(),
    );
    expect(kept).toHaveLength(2);
    expect(kept[0]?.message).toContain("second question");
  });

  it("answers with a tool error naming a dead downstream server, and the session keeps working", async () => {
    model = models.play([{ text: "must not run" }]);
    const dead = await session(alice).callExpert(call(alice, "needs_gone"));
    expect(dead.outcome).toBe("error");
    expect(dead.text).toContain('"gone"');
    // Points at the route that shows each server's state, for this skill (not /healthz, which is only liveness).
    expect(dead.text).toContain(`GET /admin/api/skills/${skill}/health`);
    expect(dead.text).not.toContain("/healthz");
    model = models.play([{ text: "Still fine." }]);
    const alive = await session(alice).callExpert(call(alice, "echoer"));
    expect(alive).toMatchObject({ outcome: "ok", text: "Still fine." });
  });

  it("answers an unknown expert with a plain error instead of throwing", async () => {
    const result = await session(alice).callExpert(call(alice, "nobody"));
    expect(result).toMatchObject({ outcome: "error" });
    expect(result.text).toContain('no expert named "nobody"');
  });
});
