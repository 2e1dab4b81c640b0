import { env } from "cloudflare:test";
import type { StepRecord } from "../../src/experts/core/run-types";
import { indexedToolCalls, writeRunIndex, type RunIndexRow } from "../../src/experts/records/run-index-writer";

/** A run index row with everything a test does not care about filled in. */
export function indexRow(fields: Partial<RunIndexRow> & Pick<RunIndexRow, "skill" | "startedAt">): RunIndexRow {
  return {
    runId: crypto.randomUUID(),
    expert: "ask",
    userId: "u-1",
    userLogin: "one",
    userEmail: null,
    threadId: null,
    catalogVersion: 1,
    provider: "google",
    model: "gemini-2.5-flash",
    outcome: "ok",
    traceId: crypto.randomUUID().replaceAll("-", ""),
    endedAt: fields.startedAt + (fields.elapsedMs ?? 100),
    elapsedMs: 100,
    steps: 1,
    inputTokens: 0,
    outputTokens: 0,
    toolCalls: 0,
    toolErrors: 0,
    downstreamBytes: 0,
    cost: null,
    budgetExhausted: null,
    refusedCalls: 0,
    ...fields,
  };
}

/** Writes rows through the session's own writer (one batch, as the alarm's flush does), with the given tool calls as one step. */
export async function writeIndexRows(rows: readonly RunIndexRow[], calls: (row: RunIndexRow) => StepRecord["toolCalls"] = () => []): Promise<void> {
  await writeRunIndex(
    env.DB,
    rows.map((row) => {
      const toolCalls = calls(row);
      const steps: StepRecord[] =
        toolCalls.length === 0 ? [] : [{ index: 0, finishReason: "tool-calls", inputTokens: 0, outputTokens: 0, text: "", toolCalls }];
      return { row, calls: indexedToolCalls(steps) };
    }),
  );
}
