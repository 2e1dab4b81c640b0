import type { UserProps } from "../../auth/user-props";
import type { CallerTrace } from "../../downstream/trace-context";
import type { ExpertConfig, ProviderName, SkillConfig } from "../../catalog/catalog-schema";
import type { JsonObject, RunOutcome, RunUsage, StepProgress, StepRecord, UnavailableTool } from "./run-types";
export type { UserPrompt, UserPrompter, UserReply } from "./run-types";

/** What the MCP surface sends to an ExpertSession over Durable Object RPC (structured-cloneable). */
export interface ExpertCallRequest {
  /** Minted by the caller so it can cancel the run with a second RPC while this one is running. */
  runId: string;
  skill: string;
  expert: string;
  /** Arguments already validated against the expert's JSON Schema, without `thread`. */
  args: Record<string, unknown>;
  /** A thread handle from an earlier answer, to continue that conversation. */
  thread?: string;
  /** The orchestrator's reply to the question the expert asked on `thread`: resumes that run. */
  answer?: string;
  /** The decision on the calls a paused run waits to have approved: resumes that run. */
  approve?: boolean;
  /** Who decided `answer`/`approve`: the user through their client (2026-07-28 input_required), or the orchestrator (default). */
  decidedBy?: "user" | "orchestrator";
  /** How the user's refusal came (a retried 2026-07-28 call): declined, or the form dismissed. */
  refusal?: "declined" | "cancelled";
  user: UserProps;
  /** The MCP request that started the run, so a `notifications/cancelled` naming it can stop it. */
  mcpRequest?: McpRequestRef;
  /** Slipsnisse's public origin as the caller reached it: connect links point there. */
  origin?: string;
  /**
   * A retried 2026-07-28 call whose user accepted to open the connect page of this flow: the
   * session waits (up to the expert's user_input_timeout_ms) for the flow to finish first.
   */
  awaitConnect?: { flowId: string; connection: "user" | "team" };
  /** A call whose SSE stream the client may resume after its response dropped (resumable-streams.ts). */
  stream?: ResumableStreamRef;
  /** The orchestrator's trace context (`params._meta.traceparent`, validated): the run joins that trace under the caller's span. */
  callerTrace?: CallerTrace;
  /** Set only by the admin API's eval runner (src/admin/evals), for the eval user's session. */
  evaluation?: EvalRunOptions;
}

/**
 * An MCP request as a cancel names it: the JSON-RPC id, unique only among one client session's
 * requests in flight, plus the client session id where the transport has one (the legacy SSE
 * session id, or the `Mcp-Session-Id` header the client sent).
 */
export interface McpRequestRef {
  requestId: string | number;
  clientSessionId?: string;
  /** The MCP revision the client named, for the run's spans (`mcp.protocol.version`); no part of a cancel's key. */
  protocolVersion?: string;
}

/** What a cancel by request found: one run (now aborted), none, or several it cannot tell apart. */
export type CancelByRequestOutcome = "cancelled" | "not_found" | "ambiguous";

export interface ExpertCallResult {
  runId: string;
  outcome: RunOutcome;
  /** The answer, or for outcome "error" the plain-language error for the orchestrator. */
  text: string;
  /** For an expert with an `output_schema`: the validated answer, sent as `structuredContent`. */
  structured?: JsonObject;
  /** The conversation's handle; absent when the run had none (a refused continuation, an unknown expert). */
  thread?: string;
  /**
   * Set when outcome is "paused": the expert asks this and waits until `expiresAt` (epoch ms).
   * `kind` says who should answer (`user`: only the human can) or that calls wait for approval.
   */
  question?: PausedAnswer;
  usage: RunUsage;
  /** The W3C trace id the run's downstream and model requests carried. */
  traceId?: string;
  /** Set when the run paused because a server needs the user to connect (sign in to it): where. */
  connect?: ConnectRequest;
  /** Downstream servers and tools the run found unavailable (reasons redacted), when any. */
  unavailable?: UnavailableTool[];
  /**
   * An eval run's steps as recorded (`evaluation` requests only): what its assertions check,
   * handed back with the answer instead of read back by two more calls to the session.
   */
  recordedSteps?: StepRecord[];
}

/** Called by the session once per step; an RPC stub of a function when it crosses the DO boundary. */
export type ProgressReporter = (progress: StepProgress) => void | Promise<void>;

/** A paused run's question as the MCP surface shows it. */
export interface PausedAnswer {
  text: string;
  expiresAt: number;
  kind: "orchestrator" | "user" | "approval";
  /** For kind "approval": each call waiting, its arguments as JSON text. */
  approvals?: Array<{ name: string; server: string; tool: string; input: string }>;
}

/** What makes an ExpertCallRequest an eval run (structured-cloneable, it crosses Durable Object RPC). */
type ExpertMode = ExpertConfig["mode"];

export interface EvalRunOptions {
  /** The eval's name in the catalog, recorded with the run. */
  name: string;
  /** A model to run the expert with instead of its own (`provider:model` on the command line). */
  provider?: ProviderName;
  model?: string;
  /** A mode to run the expert in instead of its own, to compare the tool loop with code mode. */
  mode?: ExpertMode;
  /** How a call needing approval is answered: declined unless the eval says `approve: true`. */
  approve: boolean;
  /**
   * A validated skill config not saved yet, and the version it would become: a write gated on
   * evals (`?require_evals=1`) runs them on what it is about to save, before anyone can use it.
   */
  candidate?: { version: number; config: SkillConfig };
}

/** What a run paused on a missing connection tells the MCP surface: where the user connects. */
export interface ConnectRequest {
  server: string;
  /** The connect page on Slipsnisse's origin (never the downstream's own URL). */
  url: string;
  /** For URL-mode elicitation (SEP-1036): the flow id, which the completion notification names. */
  elicitationId: string;
  connection: "user" | "team";
}

/** What a resumed stream needs to write its events as the first stream would have. */
export interface ResumableStreamRef {
  /** Minted by the MCP surface; the stream's event ids are `<id>:<n>`. */
  id: string;
  requestId: string | number;
  progressToken?: string | number;
  structuredExpected: boolean;
  /** The expert's `budget.timeout_ms`: a resumed stream waits for the run no longer than that (and a grace). */
  timeoutMs: number;
}
