import type { ExpertRunResult, RecordedOutcome, RunUsage, StepRecord, UnavailableTool } from "../core/run-types";

/** Who made the call, as signed in: the id, and the login and email to show it by. */
export interface RunCaller {
  userId: string;
  login: string;
  email?: string;
}

/** The durable subset of a run: plain data only. Nothing here may hold a secret, token or closure. */
export interface StoredRunStart {
  id: string;
  skill: string;
  expert: string;
  userId: string;
  threadId: string | null;
  catalogVersion: number | null;
  provider: string;
  model: string | null;
  startedAt: number;
  /** The W3C trace id sent on the run's downstream and model requests. */
  traceId?: string;
  caller?: RunCaller;
  /** The arguments as JSON, redacted of secrets and cut to a bound. */
  args?: string;
}

/** What a run ends with besides its result: the runner's notes and the answer, both redacted and cut. */
export interface RunEndTrace {
  notes: readonly string[];
  answer: string;
  /** Servers and tools the run found unavailable (reasons redacted). */
  unavailable: readonly UnavailableTool[];
}

export interface StoredRun extends Omit<StoredRunStart, "traceId" | "caller" | "args"> {
  outcome: RecordedOutcome | "running";
  error: string | null;
  usage: RunUsage | null;
  endedAt: number | null;
  traceId: string | null;
  caller: RunCaller | null;
  args: string | null;
  /** Tools the runner left out and why (unlisted, blocked, withheld, unavailable servers). */
  notes: string[];
  answer: string | null;
  /** Servers and tools the run found unavailable: left out, or a call failed because the server could not be reached. */
  unavailable: UnavailableTool[];
}

/** Durable Object SQLite binds at most 100 parameters per statement; a step row binds 8. */
const STEPS_PER_INSERT = 12;

export class RunLog {
  constructor(private readonly sql: SqlStorage) {}

  start(run: StoredRunStart): void {
    this.sql.exec(
      `INSERT INTO runs (id, skill, expert, user_id, thread_id, catalog_version, provider, model, outcome, started_at, trace_id, caller, args)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?, ?, ?)`,
      run.id,
      run.skill,
      run.expert,
      run.userId,
      run.threadId,
      run.catalogVersion,
      run.provider,
      run.model,
      run.startedAt,
      run.traceId ?? null,
      run.caller ? JSON.stringify(run.caller) : null,
      run.args ?? null,
    );
  }

  finish(runId: string, result: Pick<ExpertRunResult, "outcome" | "usage" | "steps" | "error">, endedAt: number, trace?: RunEndTrace): void {
    this.sql.exec(
      `UPDATE runs SET outcome = ?, error = ?, usage = ?, ended_at = ?, notes = ?, answer = ?, unavailable = ? WHERE id = ?`,
      result.outcome,
      result.error?.message ?? null,
      JSON.stringify(result.usage),
      endedAt,
      trace ? JSON.stringify(trace.notes) : null,
      trace?.answer ?? null,
      trace && trace.unavailable.length > 0 ? JSON.stringify(trace.unavailable) : null,
      runId,
    );
    // One statement per batch of steps instead of one per step (a 20-step run wrote 20 rows one by one).
    for (let i = 0; i < result.steps.length; i += STEPS_PER_INSERT) this.insertSteps(runId, result.steps.slice(i, i + STEPS_PER_INSERT));
  }

  /** Runs still "running": on a fresh instance, the ones a restart cut off. */
  unfinished(): StoredRun[] {
    return this.sql.exec<RunRow>(`SELECT * FROM runs WHERE outcome = 'running'`).toArray().map(toStoredRun);
  }

  /** Marks runs a restart interrupted: nothing stays "running" forever (the index names them the same, interruptedIndexEntry). */
  abandonUnfinished(endedAt: number): number {
    return this.sql.exec(
      `UPDATE runs SET outcome = 'interrupted', error = 'interrupted: the session restarted during the run', ended_at = ?
       WHERE outcome = 'running'`,
      endedAt,
    ).rowsWritten;
  }

  get(runId: string): StoredRun | null {
    const row = this.sql.exec<RunRow>(`SELECT * FROM runs WHERE id = ?`, runId).toArray()[0];
    return row ? toStoredRun(row) : null;
  }

  recent(limit: number): StoredRun[] {
    return this.sql.exec<RunRow>(`SELECT * FROM runs ORDER BY started_at DESC LIMIT ?`, limit).toArray().map(toStoredRun);
  }

  steps(runId: string): StepRecord[] {
    return this.sql
      .exec<StepRow>(`SELECT * FROM run_steps WHERE run_id = ? ORDER BY step`, runId)
      .toArray()
      .map((row) => ({
        index: row.step,
        finishReason: row.finish_reason,
        inputTokens: row.input_tokens,
        outputTokens: row.output_tokens,
        text: row.text,
        // Written only by insertSteps below from typed records: our own JSON, not untrusted input.
        toolCalls: JSON.parse(row.tool_calls) as StepRecord["toolCalls"],
        ...(row.model_call === null ? {} : { model: JSON.parse(row.model_call) as NonNullable<StepRecord["model"]> }),
      }));
  }

  private insertSteps(runId: string, steps: readonly StepRecord[]): void {
    if (steps.length === 0) return;
    this.sql.exec(
      `INSERT OR REPLACE INTO run_steps (run_id, step, finish_reason, input_tokens, output_tokens, text, tool_calls, model_call)
       VALUES ${steps.map(() => "(?, ?, ?, ?, ?, ?, ?, ?)").join(", ")}`,
      ...steps.flatMap((step) => [
        runId,
        step.index,
        step.finishReason,
        step.inputTokens,
        step.outputTokens,
        step.text,
        JSON.stringify(step.toolCalls),
        step.model ? JSON.stringify(step.model) : null,
      ]),
    );
  }
}

type RunRow = {
  id: string;
  skill: string;
  expert: string;
  user_id: string;
  thread_id: string | null;
  catalog_version: number | null;
  provider: string;
  model: string | null;
  outcome: string;
  error: string | null;
  usage: string | null;
  started_at: number;
  ended_at: number | null;
  trace_id: string | null;
  caller: string | null;
  args: string | null;
  notes: string | null;
  answer: string | null;
  unavailable: string | null;
};
type StepRow = {
  run_id: string;
  step: number;
  finish_reason: string;
  input_tokens: number;
  output_tokens: number;
  text: string;
  tool_calls: string;
  model_call: string | null;
};

/** Rows written before retries were counted have none. */
function storedUsage(json: string): RunUsage {
  const usage = JSON.parse(json) as Omit<RunUsage, "retries"> & { retries?: number };
  return { ...usage, retries: usage.retries ?? 0 };
}

function toStoredRun(row: RunRow): StoredRun {
  return {
    id: row.id,
    skill: row.skill,
    expert: row.expert,
    userId: row.user_id,
    threadId: row.thread_id,
    catalogVersion: row.catalog_version,
    provider: row.provider,
    model: row.model,
    outcome: row.outcome as StoredRun["outcome"],
    error: row.error,
    usage: row.usage === null ? null : storedUsage(row.usage),
    startedAt: row.started_at,
    endedAt: row.ended_at,
    traceId: row.trace_id,
    caller: row.caller === null ? null : (JSON.parse(row.caller) as RunCaller),
    args: row.args,
    notes: row.notes === null ? [] : (JSON.parse(row.notes) as string[]),
    answer: row.answer,
    // Written only by finish above from typed records.
    unavailable: row.unavailable === null ? [] : (JSON.parse(row.unavailable) as UnavailableTool[]),
  };
}
