import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { RunUsage, StepRecord } from "../../../src/experts/core/run-types";
import { RunLog } from "../../../src/experts/records/run-log";
import { applySessionSchema } from "../../../src/experts/session/session-schema";

function withLog<T>(name: string, use: (log: RunLog) => T): Promise<T> {
  const stub = env.EXPERT_SESSION.get(env.EXPERT_SESSION.idFromName(`run-log:${name}`));
  return runInDurableObject(stub, (_instance, state) => {
    applySessionSchema(state.storage);
    return use(new RunLog(state.storage.sql));
  });
}

const usage: RunUsage = {
  steps: 0,
  inputTokens: 0,
  outputTokens: 0,
  toolCalls: 0,
  refusedToolCalls: 0,
  downstreamBytesRead: 0,
  bytesReturned: 0,
  elapsedMs: 1,
  budgetExhausted: null,
  retries: 0,
};

const step = (index: number): StepRecord => ({
  index,
  finishReason: index === 39 ? "stop" : "tool-calls",
  inputTokens: 10 + index,
  outputTokens: index,
  text: `step ${index}`,
  toolCalls: [{ toolCallId: `c${index}`, name: "docs__search", status: "ok", bytes: index, elapsedMs: 1 }],
});

describe("run log", () => {
  it("records every step of a long run, in order, with its fields", async () => {
    const steps = Array.from({ length: 40 }, (_, i) => step(i));
    const stored = await withLog("long-run", (log) => {
      log.start({ id: "r1", skill: "s", expert: "e", userId: "u", threadId: null, catalogVersion: 1, provider: "workers-ai", model: null, startedAt: 1 });
      log.finish("r1", { outcome: "ok", usage: { ...usage, steps: 40 }, steps, error: undefined }, 2);
      return { run: log.get("r1"), steps: log.steps("r1") };
    });
    expect(stored.run).toMatchObject({ outcome: "ok", usage: { steps: 40 }, endedAt: 2 });
    expect(stored.steps).toEqual(steps);
  });

  it("records a run without steps", async () => {
    const stored = await withLog("no-steps", (log) => {
      log.start({ id: "r2", skill: "s", expert: "e", userId: "u", threadId: null, catalogVersion: 1, provider: "workers-ai", model: null, startedAt: 1 });
      log.finish("r2", { outcome: "error", usage, steps: [], error: undefined }, 2);
      return { run: log.get("r2"), steps: log.steps("r2") };
    });
    expect(stored.run).toMatchObject({ outcome: "error" });
    expect(stored.steps).toEqual([]);
  });
});
