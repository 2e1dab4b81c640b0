import type { UserProps } from "../auth/user-props";
import type { JsonObject, RunOutcome, RunUsage, StepProgress } from "./expert-types";

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
  user: UserProps;
}

export interface ExpertCallResult {
  runId: string;
  outcome: RunOutcome;
  /** The answer, or for outcome "error" the plain-language error for the orchestrator. */
  text: string;
  /** For an expert with an `output_schema`: the validated answer, sent as `structuredContent`. */
  structured?: JsonObject;
  thread: string;
  usage: RunUsage;
  /** The W3C trace id the run's downstream and model requests carried. */
  traceId?: string;
}

/** Called by the session once per step; an RPC stub of a function when it crosses the DO boundary. */
export type ProgressReporter = (progress: StepProgress) => void | Promise<void>;
