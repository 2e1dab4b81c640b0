import type { ExpertConfig } from "../../catalog/catalog-schema";
import { addUsage, NOTHING_USED } from "../run/ask-back";
import type { ExpertCallResult } from "../core/call-types";
import type { ExpertRunResult } from "../core/run-types";
import { ApprovalPendingError, NoPendingApprovalError, NoPendingQuestionError, PausedRunExpiredError, QuestionPendingError } from "./ask-back-errors";
import { pausedRunSchema, type PausedRun } from "../run/paused-run";

/**
 * Runs paused on an `ask_orchestrator` or `ask_user` question, or on downstream calls awaiting
 * approval, one per thread (a thread's run waits for its answer or decision before the thread
 * can go on). Rows are the durable subset in paused-run.ts, parsed
 * when read back. An unanswered row stays until its thread is next called (and is dropped then
 * if expired) or a retention job removes it by `expires_at`.
 */
export class PausedRuns {
  constructor(private readonly sql: SqlStorage) {}

  save(threadId: string, run: PausedRun): void {
    const state = JSON.stringify(pausedRunSchema.parse(run));
    this.sql.exec(
      `INSERT OR REPLACE INTO paused_runs (thread_id, run_id, expert, state, paused_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)`,
      threadId,
      run.runId,
      run.expert,
      state,
      run.pausedAt,
      run.expiresAt,
    );
  }

  /**
   * What a call on a thread continues: with `answer`, the paused run it resumes (removed here,
   * so two replies cannot both resume it; the session saves it back if the resumed run fails);
   * without, nothing, but a question still waiting refuses the call. A run waiting for approval
   * takes only `approve`, one waiting for an answer only `answer`. Expired runs are dropped.
   */
  take(expert: string, threadId: string | undefined, reply: { answer?: string; approve?: boolean }, now: number): PausedRun | undefined {
    const { answer, approve } = reply;
    if (threadId === undefined) {
      if (answer !== undefined) throw new NoPendingQuestionError(expert);
      if (approve !== undefined) throw new NoPendingApprovalError(expert);
      return undefined;
    }
    const paused = this.read(threadId);
    if (paused && paused.expiresAt <= now) {
      this.delete(threadId);
      if (answer !== undefined || approve !== undefined) throw new PausedRunExpiredError(expert, threadId, paused.expiresAt);
      return undefined;
    }
    const waitsForApproval = paused?.kind === "approval";
    if (answer === undefined && approve === undefined) {
      if (paused && waitsForApproval) throw new ApprovalPendingError(expert, threadId, paused.question);
      if (paused) throw new QuestionPendingError(expert, threadId, paused.question);
      return undefined;
    }
    if (approve !== undefined && !waitsForApproval) throw new NoPendingApprovalError(expert, threadId);
    if (!paused) throw new NoPendingQuestionError(expert, threadId);
    if (waitsForApproval && approve === undefined) throw new ApprovalPendingError(expert, threadId, paused.question);
    this.delete(threadId);
    return paused;
  }

  /**
   * After a run on a thread: a run that asked is stored until answered (with the budget it used,
   * added to what it had used before an earlier pause), and its question returned; a resumed
   * run that failed or was cancelled puts its paused state back, so the orchestrator can reply again.
   */
  afterRun(
    threadId: string,
    runId: string,
    expert: ExpertConfig,
    result: ExpertRunResult,
    resumed: PausedRun | undefined,
    now: number,
  ): ExpertCallResult["question"] {
    if (result.outcome === "paused" && result.question) {
      const expiresAt = now + expert.ask_back_ttl_ms;
      this.save(threadId, {
        runId,
        expert: expert.name,
        question: result.question.question,
        askCallIds: result.question.callIds,
        ...(result.question.kind && result.question.kind !== "orchestrator" ? { kind: result.question.kind } : {}),
        ...(result.question.approvals ? { approvals: result.question.approvals } : {}),
        turns: result.messages,
        used: addUsage(resumed?.used ?? NOTHING_USED, result.usage),
        pausedAt: now,
        expiresAt,
      });
      return {
        text: result.question.question,
        expiresAt,
        kind: result.question.kind ?? "orchestrator",
        ...(result.question.approvals
          ? { approvals: result.question.approvals.map(({ name, server, tool, input }) => ({ name, server, tool, input: inputJson(input) })) }
          : {}),
      };
    }
    if (resumed && (result.outcome === "error" || result.outcome === "cancelled")) this.save(threadId, resumed);
    return undefined;
  }

  private read(threadId: string): PausedRun | undefined {
    const row = this.sql.exec<{ state: string }>(`SELECT state FROM paused_runs WHERE thread_id = ?`, threadId).toArray()[0];
    if (!row) return undefined;
    let raw: unknown;
    try {
      raw = JSON.parse(row.state);
    } catch {
      return undefined;
    }
    const parsed = pausedRunSchema.safeParse(raw);
    return parsed.success ? parsed.data : undefined;
  }

  private delete(threadId: string): void {
    this.sql.exec(`DELETE FROM paused_runs WHERE thread_id = ?`, threadId);
  }
}

/** A call's arguments as JSON text for the orchestrator and the user (bounded; never throws). */
function inputJson(input: unknown): string {
  try {
    const text = JSON.stringify(input) ?? "null";
    return text.length > 4_000 ? `${text.slice(0, 4_000)}…` : text;
  } catch {
    return '"[not serialisable]"';
  }
}
