import { NoSuchToolError } from "ai";
import type { ModelMessage, StepResult, ToolSet } from "ai";
import type { StepRecord, ToolCallRecord, UnavailableTool, UserDecision } from "./run-types";

/** A call's record plus the text the model saw, kept for the budget-exhausted summary. */
interface CallEntry {
  record: ToolCallRecord;
  modelText?: string;
}

/**
 * Everything a run gathered, filled from the tool adapter (as calls finish) and the loop's step
 * callback (as steps finish), so a run cut short by its clock still reports what it had.
 */
export class RunRecorder {
  readonly steps: StepRecord[] = [];
  readonly responseMessages: ModelMessage[] = [];
  private readonly calls = new Map<string, CallEntry>();
  /** Calls of an earlier (paused) step decided when this run resumed: not part of any step of this run. */
  private readonly decided = new Set<string>();
  inputTokens = 0;
  outputTokens = 0;
  downstreamBytesRead = 0;
  invalidInputs = 0;
  /** Model calls retried (rate limits, 5xx, network failures) inside the run's deadline. */
  modelRetries = 0;
  readonly invalidInputTools: string[] = [];
  /** Servers and tools found unavailable during the run, each once (its first reason). */
  readonly unavailable: UnavailableTool[] = [];
  lastText = "";
  /**
   * The expert's own tool names when the step now running offers none because the budget ended
   * (synthesize.ts' last chance): a call of one of them is a budget stop, not a refusal.
   */
  private withheldForBudget: ReadonlySet<string> = new Set();
  /** When the step now running started its model call (or, before the loop reports one, when the run opened). */
  private stepStartedAt: number;

  constructor(startedAt = Date.now()) {
    this.stepStartedAt = startedAt;
  }

  /** The next step offers no tools because the budget ended (`names`: the tools it would have had), or offers them again (empty). */
  budgetWithholdsTools(names: readonly string[]): void {
    this.withheldForBudget = new Set(names);
  }

  /** When the step's model call answered, if the loop reported it. */
  private modelEndedAt: number | undefined;
  /** A step started and its model has not answered yet. */
  private modelWaiting = false;

  /** The loop started a step: its model call starts now (tool listing and earlier steps are behind it). */
  stepStarted(): void {
    this.stepStartedAt = Date.now();
    this.modelEndedAt = undefined;
    this.modelWaiting = true;
  }

  /**
   * The step's model call answered. Measured here on the clock the tool calls' start times use
   * (`Date.now`), so the waterfall's bars line up; the AI SDK's `responseTimeMs` is the fallback.
   */
  modelCallEnded(): void {
    this.modelEndedAt = Date.now();
    this.modelWaiting = false;
  }

  /** When the model call still unanswered at the run's end started (a hang, a timeout, a retry storm). */
  pendingModelCall(): { startedAt: number } | undefined {
    return this.modelWaiting ? { startedAt: this.stepStartedAt } : undefined;
  }

  /**
   * A call's start is when it was first recorded (the adapter records a provisional entry as it
   * starts; a refused or declined call is recorded once, after its `elapsedMs`).
   */
  recordCall(record: ToolCallRecord, modelText?: string): void {
    const startedAt = this.calls.get(record.toolCallId)?.record.startedAt ?? record.startedAt ?? Date.now() - record.elapsedMs;
    this.calls.set(record.toolCallId, { record: { ...record, startedAt }, ...(modelText === undefined ? {} : { modelText }) });
  }

  /** A server left out (no `tool`) or a call that failed because its server was unavailable. */
  markUnavailable(entry: UnavailableTool): void {
    if (this.unavailable.some((known) => known.server === entry.server && known.tool === entry.tool)) return;
    this.unavailable.push(entry);
  }

  /** Adds the approval or answer decision to a call already recorded. */
  markDecision(toolCallId: string, decision: UserDecision): void {
    const entry = this.calls.get(toolCallId);
    if (entry) entry.record.decision = decision;
  }

  /** Marks a call as decided on resume (see `decided`). */
  markDecided(toolCallId: string): void {
    this.decided.add(toolCallId);
  }

  decidedCalls(): ToolCallRecord[] {
    return [...this.decided].flatMap((id) => {
      const entry = this.calls.get(id);
      return entry ? [entry.record] : [];
    });
  }

  recordStep(step: StepResult<ToolSet>): StepRecord {
    const toolCalls: ToolCallRecord[] = [];
    for (const part of step.content) {
      if (part.type !== "tool-call") continue;
      toolCalls.push(this.callRecord(part.toolCallId, part.toolName, part.dynamic ? part : undefined));
    }
    const record: StepRecord = {
      index: this.steps.length,
      finishReason: step.finishReason,
      inputTokens: step.usage.inputTokens ?? 0,
      outputTokens: step.usage.outputTokens ?? 0,
      text: step.text,
      toolCalls,
      // Retries are counted by the session's traced model and filled in when the run is stored.
      model: {
        provider: step.model.provider,
        model: step.model.modelId,
        latencyMs: this.modelEndedAt === undefined ? Math.round(step.performance.responseTimeMs) : this.modelEndedAt - this.stepStartedAt,
        retries: 0,
        startedAt: this.stepStartedAt,
      },
    };
    // A loop that reports no step start (route) starts its next model call when this step ends.
    this.stepStartedAt = Date.now();
    this.modelEndedAt = undefined;
    this.modelWaiting = false;
    this.steps.push(record);
    this.responseMessages.push(...step.response.messages);
    this.inputTokens += record.inputTokens;
    this.outputTokens += record.outputTokens;
    if (step.text.trim().length > 0) this.lastText = step.text;
    return record;
  }

  /** Calls the model emitted that never reached the adapter are refused (unknown name) or malformed. */
  private callRecord(id: string, name: string, dynamic: { invalid?: boolean; error?: unknown } | undefined): ToolCallRecord {
    const known = this.calls.get(id);
    if (known) return known.record;
    let record: ToolCallRecord;
    if (dynamic?.invalid && NoSuchToolError.isInstance(dynamic.error) && this.withheldForBudget.has(name)) {
      record = {
        toolCallId: id,
        name,
        status: "budget_stop",
        bytes: 0,
        elapsedMs: 0,
        startedAt: Date.now(),
        error: "not run: the budget ended, so this last step offered no tools",
      };
    } else if (dynamic?.invalid && NoSuchToolError.isInstance(dynamic.error)) {
      record = { toolCallId: id, name, status: "refused", bytes: 0, elapsedMs: 0, startedAt: Date.now(), error: "not available to this expert" };
    } else if (dynamic?.invalid) {
      this.invalidInputs++;
      this.invalidInputTools.push(name);
      record = { toolCallId: id, name, status: "error", bytes: 0, elapsedMs: 0, startedAt: Date.now(), error: "malformed arguments" };
    } else {
      record = { toolCallId: id, name, status: "error", bytes: 0, elapsedMs: 0, startedAt: Date.now(), error: "not executed" };
    }
    this.calls.set(id, { record });
    return record;
  }

  /** The records of these calls, in this order (those recorded). */
  callsById(ids: readonly string[]): ToolCallRecord[] {
    return ids.flatMap((id) => {
      const entry = this.calls.get(id);
      return entry ? [entry.record] : [];
    });
  }

  allCalls(): ToolCallRecord[] {
    return [...this.calls.values()].map((entry) => entry.record);
  }

  /** Calls no finished step lists: the ones a cancel or the run's clock cut off mid-step. */
  unfinishedCalls(): ToolCallRecord[] {
    const inSteps = new Set(this.steps.flatMap((step) => step.toolCalls.map((call) => call.toolCallId)));
    return this.allCalls().filter((call) => !inSteps.has(call.toolCallId) && !this.decided.has(call.toolCallId));
  }

  refusedCount(): number {
    return this.allCalls().filter((call) => call.status === "refused").length;
  }

  /** What successful calls returned (as the model saw it), newest last. */
  gatheredResults(): Array<{ name: string; text: string }> {
    return [...this.calls.values()]
      .filter((entry) => entry.modelText !== undefined && (entry.record.status === "ok" || entry.record.status === "truncated"))
      .map((entry) => ({ name: entry.record.name, text: entry.modelText ?? "" }));
  }
}
