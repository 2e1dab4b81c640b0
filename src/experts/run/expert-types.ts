import type { LanguageModel, ModelMessage } from "ai";
import type { ExpertConfig, ToolPolicy } from "../../catalog/catalog-schema";
import type { ToolSource } from "../../downstream/downstream-types";

/**
 * A structured answer as it crosses Durable Object RPC. Not a recursive JSON type: the RPC
 * stub's serialisability check recurses into one without end (TS2589).
 */
export type JsonObject = { [key: string]: string | number | boolean | null | object };

export type BudgetKind = "steps" | "timeout" | "tool_calls" | "output_tokens";
/** "paused": an ask_back expert asked the orchestrator a question and waits for the answer. */
export type RunOutcome = "ok" | "budget_exhausted" | "cancelled" | "error" | "paused";

/** Returned to the orchestrator in `structuredContent.usage`/`_meta` and stored with the run. */
export interface RunUsage {
  steps: number;
  inputTokens: number;
  outputTokens: number;
  toolCalls: number;
  refusedToolCalls: number;
  /** Bytes of downstream tool results the sub-agent read (before truncation). */
  downstreamBytesRead: number;
  /** Bytes of the final answer returned to the orchestrator. */
  bytesReturned: number;
  elapsedMs: number;
  budgetExhausted: BudgetKind | null;
  /** Model calls retried after a rate limit, 5xx or dropped connection. */
  retries: number;
}

export interface ToolCallRecord {
  toolCallId: string;
  /** Namespaced `server__tool` as the model emitted it. */
  name: string;
  /**
   * `truncated` is an ok call whose result was cut to max_tool_result_bytes; `withheld` a tool
   * whose definition changed since it was pinned; `cancelled` a call the run's abort cut short.
   */
  status: "ok" | "error" | "refused" | "truncated" | "withheld" | "cancelled";
  bytes: number;
  elapsedMs: number;
  error?: string;
  /** The downstream server and tool, for calls that reached the adapter. */
  server?: string;
  tool?: string;
  /** The arguments as JSON and the start of the result: raw while the run goes on, redacted and cut when stored. */
  args?: string;
  result?: string;
}

/** The model call behind one step, for the run's trace. */
export interface ModelCallRecord {
  provider: string;
  model: string;
  /** Time waiting for the model's response, retries included. */
  latencyMs: number;
  /** Failed attempts (429, 5xx) the AI SDK retried before this call succeeded. */
  retries: number;
}

export interface StepRecord {
  index: number;
  finishReason: string;
  inputTokens: number;
  outputTokens: number;
  text: string;
  toolCalls: ToolCallRecord[];
  model?: ModelCallRecord;
}

export interface StepProgress {
  step: number;
  maxSteps: number;
  /** A short human description of what the sub-agent is doing, e.g. "calling docs__search". */
  message: string;
}

export interface ExpertRunInput {
  expert: ExpertConfig;
  toolPolicy: ToolPolicy;
  /** Validated tool arguments from the orchestrator. */
  args: Record<string, unknown>;
  /** Earlier turns of a thread, already truncated to its token budget. */
  history?: ModelMessage[];
  /**
   * For a paused run being resumed: its turns so far, ending with the answer as the
   * ask_orchestrator result (ask-back.ts). They replace the user turn built from `args`.
   */
  resume?: ModelMessage[];
  model: LanguageModel;
  tools: ToolSource;
  signal?: AbortSignal;
  onStep?: (progress: StepProgress) => void;
}

export interface ExpertRunResult {
  outcome: RunOutcome;
  text: string;
  /** For an expert with an `output_schema`: the answer, validated against it (`text` holds its JSON). */
  structured?: JsonObject;
  usage: RunUsage;
  steps: StepRecord[];
  /** Set when outcome is "error": the plain-language message for the orchestrator. */
  error?: { kind: string; message: string };
  /** The new turns (user + assistant + tools) to append to the thread. */
  messages: ModelMessage[];
  /** What the runner left out and why (unlisted or blocked tools, unavailable servers), for the run record. */
  notes?: string[];
  /** Tool calls of a step that never finished (the run was cancelled or timed out mid-step), for the trace. */
  unfinishedToolCalls?: ToolCallRecord[];
  /** Set when outcome is "paused": the question, and the calls its answer resumes. */
  question?: { question: string; callIds: string[] };
}
