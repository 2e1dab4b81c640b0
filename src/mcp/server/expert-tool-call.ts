import { waitUntil } from "cloudflare:workers";
import type { CallToolResult, InputRequiredResult, ServerContext } from "@modelcontextprotocol/server";
import type { UserProps } from "../../auth/user-props";
import type { ExpertConfig } from "../../catalog/catalog-schema";
import type { McpRequestRef } from "../../experts/core/call-types";
import type { CompiledSkill } from "../../catalog/compiled-skill-cache";
import type { ClientProfile } from "../inbound/client-profile";
import type { StepProgress } from "../../experts/core/run-types";
import { interruptedRunResult } from "../../experts/protocol/interrupted-run";
import { sessionStub } from "../../experts/session/session-name";
import { callerTraceOfMeta } from "../../downstream/trace-context";
import { log } from "../../observability/logger";
import { connectInputRequired, connectPrompter, connectRetry, originOf } from "../delivery/connect-elicitation";
import { prepareExpertCall } from "./expert-call-checks";
import { toToolResult } from "../delivery/expert-tool-result";
import { splitThread } from "./expert-tool-schema";
import type { ClientRequester } from "../delivery/mid-call-requests";
import { progressNotification, streamRef } from "../delivery/resumable-calls";
import { resumeGraceMs } from "../delivery/resume-timing";
import { decidedInRunView } from "./run-app";
import { inputRequiredFor, type RequestStateSeal, retriedReply, userChannel } from "../delivery/user-input";
import { RequestStateRefusedError } from "../delivery/request-state-errors";

/** Who calls: the user, the skill they reached, and what their client is. */
export interface CallerContext {
  env: Env;
  skill: CompiledSkill;
  user: UserProps;
  /** What the client is (inbound/client-profile.ts): every difference between clients is decided from it. */
  profile: ClientProfile;
  /** The origin the client reached, where no HTTP request rides along with each call (legacy SSE). */
  origin?: string;
  /** Told of each call's run while it is in flight (legacy SSE: a reconnect after a restart answers the cut calls). */
  inFlight?: InFlightCalls;
}

/** The calls in flight on a connection, by the client's request id and the run answering it. */
export interface InFlightCalls {
  started(call: { requestId: string | number; runId: string; structured: boolean; timeoutMs: number }): Promise<void>;
  ended(requestId: string | number): void;
}

/** How this call may reach its client beyond its answer. */
export interface CallRoute {
  /** Mid-call requests written onto the call's own stream (a stateless 2025 call), answered through the session. */
  routed?: ClientRequester | undefined;
  /** The call's resumable stream id (2025-11-25, resumable-calls.ts). */
  resumableStream?: string | undefined;
}

/**
 * One `tools/call` of an expert: the call checked and handed to the caller's ExpertSession, its
 * progress, cancel and mid-call requests wired to what the client can take (its ClientProfile),
 * and the session's answer shaped for that client.
 */
export async function callExpert(
  { env, skill, user, profile, origin, inFlight }: CallerContext,
  expert: ExpertConfig,
  rawArgs: Record<string, unknown>,
  ctx: ServerContext,
  { routed, resumableStream }: CallRoute = {},
): Promise<CallToolResult | InputRequiredResult> {
  const modern = profile.era === "2026-07-28";
  const channel = userChannel(profile, ctx, expert, routed);
  const stub = sessionStub(env, skill.name, user.userId);
  // A 2026-07-28 retry: the state its requestState handle stands for, used once, from the user's
  // own session (request-states.ts); a handle this session did not issue for this expert
  // (altered, replayed, expired, another user's) is refused.
  const handle = modern ? ctx.mcpReq.requestState() : undefined;
  let opened: unknown;
  if (typeof handle === "string") {
    const used = await stub.useRequestState(expert.name, handle);
    if ("problem" in used) return { isError: true, content: [{ type: "text", text: new RequestStateRefusedError(used.problem).toolMessage }] };
    opened = used.state;
  }
  const seal: RequestStateSeal = (state) => stub.mintRequestState(expert.name, state);
  // A 2026-07-28 retry after our connect request: same thread, and wait for the flow if the user went to the page.
  const connecting = modern ? connectRetry(ctx, opened) : undefined;
  const split =
    connecting?.thread !== undefined && splitThread(rawArgs, expert).thread === undefined
      ? { ...splitThread(rawArgs, expert), thread: connecting.thread }
      : splitThread(rawArgs, expert);
  // A 2026-07-28 retry carrying the user's reply to our input_required answer resumes that run.
  const retried = channel.kind === "input-required" ? retriedReply(ctx, expert, opened) : undefined;
  const prepared = prepareExpertCall(skill.name, expert, retried ? { ...split, ...retried } : split);
  if (!prepared.ok) return prepared.refusal;
  const { args, thread, answer, approve } = prepared;
  const refusal = retried && "refusal" in retried ? retried.refusal : undefined;
  const runId = crypto.randomUUID();
  // A 2025 client cancels with `notifications/cancelled` naming this id; on stateless Streamable
  // HTTP it arrives at another server instance, which finds the run through the session (serveMcp).
  const { clientSessionId } = profile;
  const mcpRequest: McpRequestRef = {
    requestId: ctx.mcpReq.id,
    ...(clientSessionId === undefined ? {} : { clientSessionId }),
    ...(profile.revision === undefined ? {} : { protocolVersion: profile.revision }),
  };
  const progressToken = ctx.mcpReq._meta?.progressToken;
  // SEP-414: the orchestrator's trace context; the run joins it. Anything malformed is ignored.
  const callerTrace = callerTraceOfMeta(ctx.mcpReq._meta);
  const onProgress = progressToken === undefined ? undefined : (progress: StepProgress) => ctx.mcpReq.notify(progressNotification(progressToken, progress));
  // A 2025-11-25 call's stream can be resumed (resumable-calls.ts): the session keeps its events.
  const stream =
    resumableStream === undefined
      ? undefined
      : streamRef(resumableStream, ctx.mcpReq.id, progressToken, expert.output_schema !== undefined, expert.budget.timeout_ms);
  // Closing the stream (2026-07-28), or a cancel this server instance receives (legacy SSE keeps
  // one instance per connection), aborts the run in the session; a dropped resumable stream only
  // if its client does not reconnect with Last-Event-ID in time (ExpertSession.streamDropped).
  // The client is gone by then and workerd ends this invocation right after the abort event:
  // without waitUntil the cancel RPC never leaves (measured in test/e2e/faults).
  const onAbort = () =>
    waitUntil(stream ? stub.streamDropped(stream.id, resumeGraceMs(expert.budget.timeout_ms)).catch(() => undefined) : stub.cancel(runId).catch(() => false));
  ctx.mcpReq.signal.addEventListener("abort", onAbort, { once: true });
  const structured = expert.output_schema !== undefined;
  await inFlight?.started({ requestId: ctx.mcpReq.id, runId, structured, timeoutMs: expert.budget.timeout_ms });
  try {
    const decision = {
      ...(answer === undefined ? {} : { answer }),
      ...(approve === undefined ? {} : { approve }),
      // The user decided: a retry carrying their reply, or a click in the run view (run-app.ts).
      ...(retried || (profile.ui && decidedInRunView(ctx)) ? { decidedBy: "user" as const } : {}),
      ...(refusal ? { refusal } : {}),
    };
    const result = await stub.callExpert(
      {
        runId,
        skill: skill.name,
        expert: expert.name,
        args,
        user,
        mcpRequest,
        ...(callerTrace === undefined ? {} : { callerTrace }),
        ...originOf(env, ctx, origin),
        ...(thread ? { thread } : {}),
        ...(stream ? { stream } : {}),
        ...decision,
        ...(connecting?.accepted ? { awaitConnect: { flowId: connecting.flowId, connection: connecting.connection } } : {}),
      },
      onProgress,
      channel.kind === "elicit" ? channel.askUser : undefined,
      // URL-mode elicitation: through the SDK's own request where the server saw `initialize`
      // (legacy SSE), routed back through the session on stateless 2025 calls, input_required in 2026.
      profile.elicitation.url && !modern ? connectPrompter(ctx, expert, routed) : undefined,
    );
    // A 2026-07-28 client that declared URL-mode elicitation is asked to open the connect page; it retries the call after (unless the user declined).
    const askToConnect = modern && profile.elicitation.url && !(connecting && !connecting.accepted);
    return (
      (askToConnect ? await connectInputRequired(result, seal) : undefined) ??
      (channel.kind === "input-required" ? await inputRequiredFor(result, seal) : undefined) ??
      toToolResult(result, expert.output_schema !== undefined)
    );
  } catch (error) {
    log("error", "expert session call failed", { runId, skill: skill.name, expert: expert.name, error: String(error) });
    // The session restarted under the call (a deploy, an eviction): its fresh instance closed the
    // run as interrupted, which the client can retry. A stub that saw the reset stays broken.
    const record = await sessionStub(env, skill.name, user.userId)
      .run(runId)
      .catch(() => null);
    if (record?.outcome === "interrupted") return toToolResult(interruptedRunResult(runId, record.startedAt), expert.output_schema !== undefined);
    return {
      isError: true,
      content: [
        {
          type: "text",
          text: `Expert "${expert.name}" could not run: its session failed (run ${runId}). Try again; if it persists, an admin can look up the run.`,
        },
      ],
    };
  } finally {
    ctx.mcpReq.signal.removeEventListener("abort", onAbort);
    inFlight?.ended(ctx.mcpReq.id);
  }
}
