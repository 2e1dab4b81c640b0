import { afterEach, describe, expect, it, vi } from "vitest";
import { callOf, expertOf, sessionOf } from "../../support/workers/session-helpers";
import { waitFor } from "../../support/wait-for";
import { useCatalogWithScriptedModels } from "../../support/workers/scripted-model";

const skill = "session-log-line";

describe("ExpertSession's per-run log line", () => {
  const models = useCatalogWithScriptedModels({
    skills: { [skill]: { servers: {}, experts: [expertOf("talker", {})] } },
  });
  afterEach(() => vi.restoreAllMocks());

  it("is written after the reply has left, once per run, with the run's fields", async () => {
    const lines: string[] = [];
    vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(" ")));
    const finishedLines = (runId: string) => lines.filter((line) => line.includes("expert run finished") && line.includes(runId));

    models.play([{ text: "First." }]);
    const first = callOf(skill, "talker", "one");
    const reply = await sessionOf(skill).callExpert(first);
    expect(reply.outcome).toBe("ok");
    // Written synchronously before the reply, the line would already be here.
    expect(finishedLines(first.runId)).toEqual([]);
    const [line] = await waitFor("the first run's log line", () => (finishedLines(first.runId).length > 0 ? finishedLines(first.runId) : undefined));
    expect(JSON.parse(line ?? "{}")).toEqual({
      level: "info",
      message: "expert run finished",
      runId: first.runId,
      skill,
      expert: "talker",
      outcome: "ok",
      steps: 1,
      toolCalls: 0,
      retries: 0,
      elapsedMs: expect.any(Number),
    });

    // Lines of consecutive runs keep their order.
    models.play([{ text: "Second." }]);
    const second = callOf(skill, "talker", "two");
    await sessionOf(skill).callExpert(second);
    await waitFor("the second run's log line", () => (finishedLines(second.runId).length > 0 ? true : undefined));
    const order = lines
      .filter((l) => l.includes("expert run finished"))
      .map((l) => (l.includes(first.runId) ? "first" : l.includes(second.runId) ? "second" : "other"));
    expect(order.filter((o) => o !== "other")).toEqual(["first", "second"]);
  });
});
