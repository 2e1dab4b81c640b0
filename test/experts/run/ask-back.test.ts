import { env, runInDurableObject } from "cloudflare:test";
import type { MockLanguageModelV4 } from "ai/test";
import { describe, expect, inject, it } from "vitest";
import type { UserProps } from "../../../src/auth/user-props";
import type { ExpertCallRequest } from "../../../src/experts/core/call-types";
import { pausedRunSchema } from "../../../src/experts/run/paused-run";
import { sessionStub } from "../../../src/experts/session/session-name";
import { taggedBase } from "../../fixtures/fixture-stats-client";
import { expertOf } from "../../support/workers/session-helpers";
import { useCatalogWithScriptedModels } from "../../support/workers/scripted-model";

const SECRET = "tok-fixture-5ecr3t-77"; // FIXTURE_TOKEN in vitest.config.ts
const fixtures = inject("fixtureServers");
const echo = taggedBase(fixtures.echo, "ask-back");
const skill = "ask-back-tests";
const alice: UserProps = { userId: "u-alice", login: "alice", role: "member" };

const session = () => sessionStub(env, skill, alice.userId);
const call = (extra: Partial<ExpertCallRequest> = {}): ExpertCallRequest => ({
  runId: crypto.randomUUID(),
  skill,
  expert: "asker",
  args: { query: "Which release should I upgrade to?" },
  user: alice,
  ...extra,
});

/** The prompt the model received, as text, for asserting what was in its context. */
const promptOf = (model: MockLanguageModelV4, index: number) => JSON.stringify(model.doGenerateCalls[index]?.prompt ?? null);

const askFirst = [
  {
    calls: [
      { name: "echo__echo", input: { text: "found-in-step-one" } },
      { name: "ask_orchestrator", input: { question: "Which major version do you run?" } },
    ],
  },
];

describe("ask-back: an expert asks the orchestrator and resumes", () => {
  const models = useCatalogWithScriptedModels({
    skills: {
      [skill]: {
        servers: { echo: { url: `${echo}/mcp`, transport: "streamable-http", headers: { Authorization: "Bearer ${FIXTURE_TOKEN}" } } },
        experts: [{ ...expertOf("asker", { echo: ["echo"] }, { max_steps: 3 }), ask_back: true }],
      },
    },
  });

  it("pauses on ask_orchestrator, then resumes with the earlier tool results, the answer and only the budget left", async () => {
    const before = models.play(askFirst);
    const paused = await session().callExpert(call());
    expect(paused).toMatchObject({ outcome: "paused", text: "Which major version do you run?", question: { text: "Which major version do you run?" } });
    expect(paused.thread).toMatch(/^th_/);
    expect(paused.usage.steps).toBe(1);
    expect(before.doGenerateCalls[0]?.tools?.map((tool) => tool.name).sort()).toEqual(["ask_orchestrator", "ask_user", "echo__echo"]);

    // Resumed: step 1 of the 2 left may use tools, the last one may not; a fresh run would get 3.
    const after = models.play([{ calls: [{ name: "echo__echo", input: { text: "again" } }] }]);
    const resumed = await session().callExpert(call({ args: {}, thread: paused.thread, answer: "We run 4.x" }));
    expect(after.doGenerateCalls).toHaveLength(2);
    expect(resumed.usage.steps).toBe(2);
    expect(after.doGenerateCalls[1]?.tools ?? []).toEqual([]);
    expect(resumed.outcome).toBe("budget_exhausted");
    // The model's next request holds the earlier tool result and the answer as the ask_orchestrator result.
    const prompt = after.doGenerateCalls[0]?.prompt ?? [];
    const results = prompt.flatMap((message) => (message.role === "tool" ? message.content : []));
    expect(JSON.stringify(results.find((part) => part.type === "tool-result" && part.toolName === "echo__echo"))).toContain("found-in-step-one");
    expect(results.find((part) => part.type === "tool-result" && part.toolName === "ask_orchestrator")).toMatchObject({
      output: { type: "text", value: "We run 4.x" },
    });
    expect(promptOf(after, 0)).toContain("Which release should I upgrade to?");

    // The thread then holds the whole conversation, question and answer included.
    const followUp = models.play([{ text: "Done." }]);
    await session().callExpert(call({ args: { query: "And after that?" }, thread: paused.thread }));
    expect(promptOf(followUp, 0)).toContain("Which major version do you run?");
    expect(promptOf(followUp, 0)).toContain("We run 4.x");
  });

  it("stores the paused run as its durable subset only: parseable data, no secret", async () => {
    models.play(askFirst);
    const paused = await session().callExpert(call());
    const row = await runInDurableObject(session(), (_instance, state) =>
      state.storage.sql.exec<{ state: string; run_id: string }>(`SELECT state, run_id FROM paused_runs WHERE thread_id = ?`, paused.thread ?? "").one(),
    );
    // The downstream header secret reached the server, but not the stored state.
    expect(row.state).not.toContain(SECRET);
    const stored = pausedRunSchema.parse(JSON.parse(row.state));
    expect(structuredClone(stored)).toEqual(stored);
    expect(stored).toMatchObject({ runId: row.run_id, expert: "asker", used: { steps: 1, toolCalls: 1 } });
    expect(stored.turns.map((turn) => turn.role)).toEqual(["user", "assistant", "tool"]);
    expect(Object.keys(stored).sort()).toEqual(["askCallIds", "expert", "expiresAt", "pausedAt", "question", "runId", "turns", "used"]);
  });

  it("refuses a late answer once the paused run expired, and says so", async () => {
    models.play(askFirst);
    const paused = await session().callExpert(call());
    const thread = paused.thread ?? "";
    await runInDurableObject(session(), (_instance, state) => {
      state.storage.sql.exec(`UPDATE paused_runs SET state = json_set(state, '$.expiresAt', 1000), expires_at = 1000 WHERE thread_id = ?`, thread);
    });
    const model = models.play([{ text: "must not run" }]);
    const late = await session().callExpert(call({ args: {}, thread, answer: "4.x" }));
    expect(late.outcome).toBe("error");
    expect(late.text).toContain(`stopped waiting for an answer on thread ${thread} at 1970-01-01T00:00:01.000Z`);
    expect(model.doGenerateCalls).toHaveLength(0);
    // The expired run is gone; the thread itself goes on with a plain follow-up.
    const again = await session().callExpert(call({ args: {}, thread, answer: "4.x" }));
    expect(again.text).toContain("has no question waiting");
    models.play([{ text: "Fresh answer." }]);
    expect(await session().callExpert(call({ thread }))).toMatchObject({ outcome: "ok", text: "Fresh answer." });
  });

  it("refuses a follow-up while a question waits, and an answer without its thread", async () => {
    models.play(askFirst);
    const paused = await session().callExpert(call());
    const model = models.play([{ text: "must not run" }]);
    const followUp = await session().callExpert(call({ thread: paused.thread }));
    expect(followUp).toMatchObject({ outcome: "error" });
    expect(followUp.text).toContain("is waiting for an answer");
    const orphan = await session().callExpert(call({ args: {}, answer: "4.x" }));
    expect(orphan.text).toContain("needs the `thread`");
    expect(model.doGenerateCalls).toHaveLength(0);
  });
});
