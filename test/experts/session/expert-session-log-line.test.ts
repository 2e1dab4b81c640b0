import { afterEach, describe, expect, it, vi } from "vitest";
import { callOf, expertOf, sessionOf } from "../../support/workers/session-helpers";
import { useCatalogWithScriptedModels } from "../../support/workers/scripted-model";
import { flushRunIndex, withoutTable } from "../../support/workers/run-index-flush";
import type { UserProps } from "../../../src/auth/user-props";

const skill = "session-log-line";
const ines: UserProps = { userId: "u-log-line-ines", login: "ines", email: "ines@example.com", role: "member" };

/**
 * The runs' log line goes with the run index flush, one line per written batch: a console call
 * per run cost the session about 1 ms of CPU under `wrangler dev` (`npm run bench -- --only=AB`).
 */
describe("ExpertSession's runs log line", () => {
  const models = useCatalogWithScriptedModels({
    skills: { [skill]: { servers: {}, experts: [expertOf("talker", {})] } },
  });
  afterEach(() => vi.restoreAllMocks());

  function captureLines(): string[] {
    const lines: string[] = [];
    vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(" ")));
    return lines;
  }
  const finishedLines = (lines: readonly string[]) => lines.filter((line) => line.includes('"message":"expert runs finished"'));

  it("is one line per flushed batch, written with the flush and not on the call's path, runs in order with their fields", async () => {
    const lines = captureLines();
    const session = sessionOf(skill, ines);
    models.play([{ text: "First." }]);
    const first = callOf(skill, "talker", "one", {}, ines);
    expect((await session.callExpert(first)).outcome).toBe("ok");
    models.play([{ text: "Second." }]);
    const second = callOf(skill, "talker", "two", {}, ines);
    const reply = await session.callExpert(second);
    expect(reply.outcome).toBe("ok");
    // Both answered, neither logged: the line waits for the flush.
    expect(finishedLines(lines)).toEqual([]);

    await flushRunIndex(session);
    const [line, ...more] = finishedLines(lines);
    expect(more).toEqual([]);
    const parsed: unknown = JSON.parse(line ?? "{}");
    expect(parsed).toEqual({
      level: "info",
      message: "expert runs finished",
      runs: [first, second].map((request) => ({
        runId: request.runId,
        skill,
        expert: "talker",
        outcome: "ok",
        steps: 1,
        toolCalls: 0,
        toolErrors: 0,
        retries: 0,
        elapsedMs: expect.any(Number),
        traceId: expect.stringMatching(/^[0-9a-f]{32}$/),
      })),
    });
    expect(parsed).toMatchObject({ runs: [{}, { traceId: reply.traceId }] });
    // Names and counts only, as the index row's summary: not the member, the question or the answer.
    for (const secretish of ["ines", "one", "First.", "Second."]) expect(line).not.toContain(`"${secretish}"`);

    // A later flush with nothing waiting writes no line.
    await flushRunIndex(session);
    expect(finishedLines(lines)).toHaveLength(1);
  });

  it("logs a run once, when its row is written: not for a failed flush, not again after the retry", async () => {
    const lines = captureLines();
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    const jon: UserProps = { userId: "u-log-line-jon", login: "jon", role: "member" };
    const session = sessionOf(skill, jon);
    models.play([{ text: "Kept." }]);
    const request = callOf(skill, "talker", "keep", {}, jon);
    expect((await session.callExpert(request)).outcome).toBe("ok");

    await withoutTable("run_index", () => flushRunIndex(session));
    expect(finishedLines(lines)).toEqual([]);
    await flushRunIndex(session);
    expect(finishedLines(lines).filter((line) => line.includes(request.runId))).toHaveLength(1);
    await flushRunIndex(session);
    expect(finishedLines(lines).filter((line) => line.includes(request.runId))).toHaveLength(1);
  });
});
