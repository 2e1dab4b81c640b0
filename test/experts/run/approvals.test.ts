import { env } from "cloudflare:test";
import type { MockLanguageModelV4 } from "ai/test";
import { describe, expect, inject, it } from "vitest";
import type { UserProps } from "../../../src/auth/user-props";
import type { ExpertCallRequest, UserPrompt, UserReply } from "../../../src/experts/core/call-types";
import { sessionStub } from "../../../src/experts/session/session-name";
import { readFixtureStats, taggedBase } from "../../fixtures/fixture-stats-client";
import { expertOf } from "../../support/workers/session-helpers";
import { dashboardFetch } from "../../dashboard/dashboard-test-client";
import { useCatalogWithScriptedModels } from "../../support/workers/scripted-model";
import { flushRunIndex } from "../../support/workers/run-index-flush";

const fixtures = inject("fixtureServers");
const echo = taggedBase(fixtures.echo, "approvals");
const skill = "approval-tests";
const optOut = "approval-opt-out-tests";
const dana: UserProps = { userId: "u-dana", login: "dana", role: "member" };
const server = { url: `${echo}/mcp`, transport: "streamable-http" };

const session = (name = skill) => sessionStub(env, name, dana.userId);
const call = (expert: string, extra: Partial<ExpertCallRequest> = {}, name = skill): ExpertCallRequest => ({
  runId: crypto.randomUUID(),
  skill: name,
  expert,
  args: { query: "Clean up record r1." },
  user: dana,
  ...extra,
});

const erases = async () => (await readFixtureStats(echo)).calls.erase ?? 0;
const echoes = async () => (await readFixtureStats(echo)).calls.echo ?? 0;

/** What the model received as tool results on its call `index`. */
function toolResults(model: MockLanguageModelV4, index: number) {
  return (model.doGenerateCalls[index]?.prompt ?? []).flatMap((message) => (message.role === "tool" ? message.content : []));
}

/** A user who answers every prompt with `reply`, keeping what they were shown. */
function user(reply: UserReply | (() => Promise<UserReply>)) {
  const shown: UserPrompt[] = [];
  const askUser = async (prompt: UserPrompt) => {
    shown.push(prompt);
    return typeof reply === "function" ? reply() : reply;
  };
  return { shown, askUser };
}

const eraseThenAnswer = [{ calls: [{ name: "echo__erase", input: { record: "r1" } }] }, { text: "Done as far as allowed." }];

async function storedCalls(runId: string, name = skill) {
  const steps = await session(name).steps(runId);
  return steps.map((step) => ({ finishReason: step.finishReason, calls: step.toolCalls }));
}

describe("approvals: calls that need the user's approval", () => {
  const models = useCatalogWithScriptedModels({
    skills: {
      [skill]: {
        servers: { echo: server },
        tool_policy: { requires_approval: ["echo__ec*"] },
        experts: [
          { ...expertOf("cleaner", { echo: ["erase", "add"] }, { max_steps: 4 }), user_input_timeout_ms: 1_000 },
          expertOf("echoer", { echo: ["echo", "add"] }, { max_steps: 4 }),
          { ...expertOf("asker", { echo: ["add"] }, { max_steps: 4 }), ask_back: true },
          { ...expertOf("router", { echo: ["erase"] }), mode: "route" },
        ],
      },
      [optOut]: {
        servers: { echo: server },
        tool_policy: { approve_destructive: false },
        experts: [expertOf("cleaner", { echo: ["erase"] }, { max_steps: 3 })],
      },
    },
  });

  it("a destructive tool is asked about mid-call, with its server, tool and arguments, and runs once approved", async () => {
    const before = await erases();
    const model = models.play(eraseThenAnswer);
    const human = user({ action: "accept", approve: true });
    const result = await session().callExpert(call("cleaner"), undefined, human.askUser);
    expect(result).toMatchObject({ outcome: "ok", text: "Done as far as allowed." });
    expect(human.shown).toEqual([
      { kind: "approval", server: "echo", tool: "erase", arguments: '{"record":"r1"}', message: expect.stringContaining("echo__erase") },
    ]);
    expect(await erases()).toBe(before + 1);
    expect(JSON.stringify(toolResults(model, 1))).toContain("erased r1");
    const [first] = await storedCalls(result.runId);
    expect(first?.calls[0]).toMatchObject({ name: "echo__erase", status: "ok", decision: { outcome: "approved", by: "user" } });
  });

  it("a declined call never runs: the model reads a refusal and the run goes on", async () => {
    const before = await erases();
    for (const reply of [{ action: "decline" }, { action: "accept", approve: false }] as const) {
      const model = models.play(eraseThenAnswer);
      const result = await session().callExpert(call("cleaner"), undefined, user(reply).askUser);
      expect(result).toMatchObject({ outcome: "ok", text: "Done as far as allowed." });
      const [first] = await storedCalls(result.runId);
      expect(first?.calls[0]).toMatchObject({ name: "echo__erase", status: "declined", decision: { outcome: "declined", by: "user" } });
      const refusal = toolResults(model, 1)[0];
      expect(refusal).toMatchObject({ type: "tool-result", toolName: "echo__erase", output: { type: "error-text" } });
      expect(JSON.stringify(refusal)).toContain("needed approval and the user declined it");
    }
    expect(await erases()).toBe(before);
  });

  it("an unanswered approval times out after user_input_timeout_ms, and a dismissed one counts as cancelled", async () => {
    const before = await erases();
    const model = models.play(eraseThenAnswer);
    const silent = user(() => new Promise<UserReply>(() => undefined));
    const timedOut = await session().callExpert(call("cleaner"), undefined, silent.askUser);
    expect(silent.shown).toHaveLength(1);
    expect(timedOut.outcome).toBe("ok");
    expect(JSON.stringify(toolResults(model, 1))).toContain("the user did not answer within 1 s");
    expect((await storedCalls(timedOut.runId))[0]?.calls[0]).toMatchObject({ status: "declined", decision: { outcome: "timed_out", by: "user" } });

    models.play(eraseThenAnswer);
    const dismissed = await session().callExpert(call("cleaner"), undefined, user({ action: "cancel" }).askUser);
    expect((await storedCalls(dismissed.runId))[0]?.calls[0]).toMatchObject({ status: "declined", decision: { outcome: "cancelled", by: "user" } });
    expect(await erases()).toBe(before);
  });

  it("approve_destructive: false opts out: the destructive tool runs without asking", async () => {
    const before = await erases();
    models.play(eraseThenAnswer);
    const human = user({ action: "decline" });
    const result = await session(optOut).callExpert(call("cleaner", {}, optOut), undefined, human.askUser);
    expect(result.outcome).toBe("ok");
    expect(human.shown).toEqual([]);
    expect(await erases()).toBe(before + 1);
    const [first] = await storedCalls(result.runId, optOut);
    expect(first?.calls[0]).toMatchObject({ status: "ok" });
    expect(first?.calls[0]?.decision).toBeUndefined();
  });

  it("requires_approval globs gate the tools they match, and only those", async () => {
    const before = await echoes();
    models.play([
      {
        calls: [
          { name: "echo__echo", input: { text: "gated" } },
          { name: "echo__add", input: { a: 1, b: 2 } },
        ],
      },
      { text: "Both handled." },
    ]);
    const human = user({ action: "decline" });
    const result = await session().callExpert(call("echoer"), undefined, human.askUser);
    expect(result.outcome).toBe("ok");
    expect(human.shown.map((prompt) => (prompt.kind === "approval" ? prompt.tool : prompt.kind))).toEqual(["echo"]);
    expect(await echoes()).toBe(before);
    const [first] = await storedCalls(result.runId);
    expect(first?.calls.map((entry) => [entry.name, entry.status])).toEqual([
      ["echo__echo", "declined"],
      ["echo__add", "ok"],
    ]);
  });

  it("without a way to ask the user, the run pauses with an approval-needed answer and resumes with approve: true", async () => {
    const before = await erases();
    models.play([{ calls: [{ name: "echo__erase", input: { record: "r1" } }] }]);
    const paused = await session().callExpert(call("cleaner"));
    expect(paused).toMatchObject({
      outcome: "paused",
      question: { kind: "approval", approvals: [{ name: "echo__erase", server: "echo", tool: "erase", input: '{"record":"r1"}' }] },
    });
    expect(paused.text).toContain("Approval needed");
    expect(await erases()).toBe(before);
    expect((await storedCalls(paused.runId))[0]?.calls[0]).toMatchObject({ name: "echo__erase", status: "awaiting_approval" });

    // A follow-up or an answer is refused while the call waits; the decision is `approve`.
    const waiting = models.play([{ text: "must not run" }]);
    expect((await session().callExpert(call("cleaner", { thread: paused.thread }))).text).toContain("waiting on thread");
    expect((await session().callExpert(call("cleaner", { args: {}, thread: paused.thread, answer: "yes" }))).text).toContain("approve: true");
    expect(waiting.doGenerateCalls).toHaveLength(0);

    const after = models.play([{ text: "Erased r1." }]);
    const resumed = await session().callExpert(call("cleaner", { args: {}, thread: paused.thread, approve: true }));
    expect(resumed).toMatchObject({ outcome: "ok", text: "Erased r1." });
    expect(await erases()).toBe(before + 1);
    expect(toolResults(after, 0)).toContainEqual(expect.objectContaining({ toolName: "echo__erase", output: { type: "text", value: "erased r1" } }));
    expect(resumed.usage.toolCalls).toBe(1);
    const steps = await storedCalls(resumed.runId);
    expect(steps[0]).toMatchObject({
      finishReason: "approval",
      calls: [{ name: "echo__erase", status: "ok", decision: { outcome: "approved", by: "orchestrator" } }],
    });
    expect(steps[1]?.finishReason).toBe("stop");
    expect(resumed.usage.steps).toBe(1);
  });

  it("resumed with approve: false, the call never runs, the model reads the refusal and answers", async () => {
    const before = await erases();
    models.play([{ calls: [{ name: "echo__erase", input: { record: "r2" } }] }]);
    const paused = await session().callExpert(call("cleaner"));
    const after = models.play([{ text: "I did not erase r2." }]);
    const resumed = await session().callExpert(call("cleaner", { args: {}, thread: paused.thread, approve: false }));
    expect(resumed).toMatchObject({ outcome: "ok", text: "I did not erase r2." });
    expect(await erases()).toBe(before);
    expect(JSON.stringify(toolResults(after, 0))).toContain("needed approval and the orchestrator declined it");
    expect((await storedCalls(resumed.runId))[0]).toMatchObject({
      finishReason: "approval",
      calls: [{ status: "declined", decision: { outcome: "declined", by: "orchestrator" } }],
    });
    // The admin's trace page shows the decision.
    await flushRunIndex(session());
    const trace = await (await dashboardFetch(`/admin/runs/${resumed.runId}`, {}, { AUTH: "none", ENVIRONMENT: "test" })).text();
    expect(trace).toContain("Decision: declined by the orchestrator");
    // Decided once: the thread has nothing waiting any more.
    expect((await session().callExpert(call("cleaner", { args: {}, thread: paused.thread, approve: true }))).text).toContain(
      "has no call waiting for approval",
    );
  });

  it("ask_user goes to the user mid-call; without a way to reach them it pauses marked for the user", async () => {
    const model = models.play([{ calls: [{ name: "ask_user", input: { question: "Which colour?" } }] }, { text: "Blue it is." }]);
    const human = user({ action: "accept", answer: "blue" });
    const answered = await session().callExpert(call("asker"), undefined, human.askUser);
    expect(answered).toMatchObject({ outcome: "ok", text: "Blue it is." });
    expect(human.shown).toEqual([{ kind: "question", message: "Which colour?" }]);
    expect(toolResults(model, 1)).toContainEqual(expect.objectContaining({ toolName: "ask_user", output: { type: "text", value: "blue" } }));
    expect((await storedCalls(answered.runId))[0]?.calls[0]).toMatchObject({ name: "ask_user", status: "ok", decision: { outcome: "answered", by: "user" } });

    const declining = models.play([{ calls: [{ name: "ask_user", input: { question: "Which colour?" } }] }, { text: "Going with the default." }]);
    await session().callExpert(call("asker"), undefined, user({ action: "decline" }).askUser);
    expect(JSON.stringify(toolResults(declining, 1))).toContain("The user declined to answer");

    models.play([{ calls: [{ name: "ask_user", input: { question: "Which colour?" } }] }]);
    const paused = await session().callExpert(call("asker"));
    expect(paused).toMatchObject({ outcome: "paused", question: { kind: "user", text: "Which colour?" } });
    const resumed = models.play([{ text: "Green, then." }]);
    expect(await session().callExpert(call("asker", { args: {}, thread: paused.thread, answer: "green" }))).toMatchObject({ text: "Green, then." });
    expect(toolResults(resumed, 0)).toContainEqual(expect.objectContaining({ toolName: "ask_user", output: { type: "text", value: "green" } }));
  });

  it("a route expert cannot pause: its call is refused without a way to ask the user, and runs once the user approves", async () => {
    const before = await erases();
    models.play([{ calls: [{ name: "echo__erase", input: { record: "r3" } }] }]);
    const refused = await session().callExpert(call("router"));
    expect(refused.outcome).toBe("error");
    expect(refused.text).toContain("echo__erase needs the user's approval, and this client cannot ask the user during the call");
    expect(await erases()).toBe(before);

    models.play([{ calls: [{ name: "echo__erase", input: { record: "r3" } }] }]);
    const approved = await session().callExpert(call("router"), undefined, user({ action: "accept", approve: true }).askUser);
    expect(approved).toMatchObject({ outcome: "ok", text: "erased r3" });
    expect(await erases()).toBe(before + 1);
  });
});
