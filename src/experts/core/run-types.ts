import type { LanguageModel, ModelMessage } from "ai";
import type { ExpertConfig, ToolPolicy } from "../../catalog/catalog-schema";
import type { ToolSource } from "../../downstream/downstream-types";

/**
 * A structured answer as it crosses Durable Object RPC. Not a recursive JSON type: the RPC
 * stub's serialisability check recurses into one without end (TS2589).
 */
export type JsonObject = { [key: string]: string | number | boolean | null | object };

export type BudgetKind = "steps" | "timeout" | "tool_calls" | "output_tokens";
/** How a run ends. "paused": an ask_back expert asked the orchestrator a question and waits for the answer. */
export const RUN_OUTCOMES = ["ok", "budget_exhausted", "cancelled", "error", "paused"] as const;
export type RunOutcome = (typeof RUN_OUTCOMES)[number];
/**
 * How a recorded run ended: its own outcome, or "interrupted" when a session restart cut it off
 * (it never got to end). The one vocabulary of the run log, the run index, /me/api, the
 * dashboard, the CLI and the trace resources.
 */
export const RECORDED_OUTCOMES = [...RUN_OUTCOMES, "interrupted"] as const;
export type RecordedOutcome = (typeof RECORDED_OUTCOMES)[number];

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
  /** Model calls retried after a rate limit, 5xx or network failure. */
  retries: number;
}

/**
 * A downstream server, or one tool of it, the run could not reach: its tools were left out (its
 * listing failed), or a call failed because the server was unavailable. The answer may still be
 * a model answer; this is how the orchestrator (and the run record) can tell.
 */
export interface UnavailableTool {
  server: string;
  /** Absent when the whole server was left out (its listing failed). */
  tool?: string;
  reason: string;
}

export interface ToolCallRecord {
  toolCallId: string;
  /** Namespaced `server__tool` as the model emitted it. */
  name: string;
  /**
   * `truncated` is an ok call whose result was cut to max_tool_result_bytes; `withheld` a tool
   * whose definition changed since it was pinned; `cancelled` a call the run's abort cut short;
   * `declined` a call that needed approval and did not get it (never executed); `awaiting_approval`
   * a call the run paused on until someone (the user, or the orchestrator) approves or declines it;
   * `budget_stop` a call of one of the expert's own tools asked on a step that offered no tools
   * because the budget ended (never run; not a refusal, not a sign of injection).
   */
  status: "ok" | "error" | "refused" | "truncated" | "withheld" | "cancelled" | "declined" | "awaiting_approval" | "budget_stop";
  bytes: number;
  elapsedMs: number;
  /** When the call started (epoch ms), for the trace's time axis; absent in records stored before it was kept. */
  startedAt?: number;
  error?: string;
  /** The downstream server and tool, for calls that reached the adapter. */
  server?: string;
  tool?: string;
  /** The arguments as JSON and the start of the result: raw while the run goes on, redacted and cut when stored. */
  args?: string;
  result?: string;
  /** For a call that needed approval, and an `ask_user` question: what was decided, and by whom. */
  decision?: UserDecision;
}

/** How a question or approval put to the user (or, without elicitation, the orchestrator) ended. */
export interface UserDecision {
  outcome: "approved" | "answered" | "declined" | "cancelled" | "timed_out" | "failed";
  by: "user" | "orchestrator";
}

/** What the runner asks the human through their MCP client (form-mode elicitation). */
export type UserPrompt = { kind: "approval"; message: string; server: string; tool: string; arguments: string } | { kind: "question"; message: string };

/** The human's reply; `approve` for an approval, `answer` for a question. */
export type UserReply = { action: "accept"; approve?: boolean; answer?: string } | { action: "decline" } | { action: "cancel" };

/**
 * Asks the human mid-call. The MCP surface passes it over Durable Object RPC only when the
 * client declared elicitation on a transport that can carry a server-to-client request.
 */
export type UserPrompter = (prompt: UserPrompt) => Promise<UserReply>;

/** A downstream call the run paused on for approval (durable: stored with the paused run). */
export interface PendingApproval {
  toolCallId: string;
  /** The model-facing `server__tool` name. */
  name: string;
  server: string;
  tool: string;
  input: unknown;
}

/** What a resumed run continues from after its pending approvals were decided. */
export interface ApprovalResume {
  turns: ModelMessage[];
  approvals: PendingApproval[];
  /** Questions asked in the same step, answered as not sent. */
  askCallIds: string[];
  approve: boolean;
  by: UserDecision["by"];
  /** A refusal that came as a dismissed form rather than a "no". */
  refusal?: "declined" | "cancelled";
}

/** The model call behind one step, for the run's trace. */
export interface ModelCallRecord {
  provider: string;
  model: string;
  /** Time waiting for the model's response, retries included. */
  latencyMs: number;
  /** Failed attempts (429, 5xx) the AI SDK retried before this call succeeded. */
  retries: number;
  /** When the step's model call started (epoch ms), for the trace's time axis; absent in older records. */
  startedAt?: number;
  /** Set on a call the model never answered before the run ended: `latencyMs` is how long it waited. */
  pending?: true;
  /** Where the call went, host only (never a path, query or key); set on a pending call. */
  endpoint?: string;
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
  /** Asks the human mid-call (approvals, ask_user); without it such a run pauses instead. */
  askUser?: UserPrompter;
  /** For a run paused on approvals: the turns and the decision it resumes with. */
  approvalResume?: ApprovalResume;
  /** The Worker's `worker_loaders` binding, where a code-mode expert's scripts run; absent in a deployment without one. */
  loader?: SandboxLoader;
}

/**
 * The part of the Worker's `worker_loaders` binding (`WorkerLoader`) a code-mode run uses, named
 * here so modules compiled without the Worker's types (the CLI's) can read these types.
 */
export interface SandboxLoader {
  load(code: SandboxWorkerCode): { getEntrypoint(): unknown };
}

/** What a script's Dynamic Worker is made of: no bindings, no env, no network. */
export interface SandboxWorkerCode {
  compatibilityDate: string;
  mainModule: string;
  modules: Record<string, string>;
  globalOutbound: null;
  limits?: { cpuMs?: number };
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
  /** A model call the run ended waiting on (it never answered), for the trace. */
  pendingModelCall?: { startedAt: number };
  /** Set when outcome is "paused": the question, and the calls its answer resumes. */
  question?: PausedQuestion;
  /** Calls decided when a paused run resumed (approved and run, or declined), for the trace. */
  decidedCalls?: ToolCallRecord[];
  /** Servers and tools the run found unavailable, when any. */
  unavailable?: UnavailableTool[];
}

/**
 * Why a run paused: a question for the orchestrator (`ask_orchestrator`), one for the user
 * (`ask_user` without a way to reach them), or downstream calls awaiting approval.
 */
export interface PausedQuestion {
  question: string;
  callIds: string[];
  kind?: "orchestrator" | "user" | "approval";
  approvals?: PendingApproval[];
}
