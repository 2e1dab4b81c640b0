import type { ExpertConfig, SkillConfig } from "../../catalog/catalog-schema";
import type { DownstreamPool } from "../../downstream/downstream-pool";
import { ConnectionSetupError } from "../../downstream/connections/connection-errors";
import { CONNECT_CALLBACK_PATH, CONNECT_PATH, connectionsStub, connectionTarget, ownerFor } from "../../downstream/connections/connection-target";
import type { SlipsnisseError } from "../../errors";
import type { UserProps } from "../../auth/user-props";
import type { ConnectRequest } from "../core/call-types";
import type { ExpertRunResult } from "../core/run-types";
import { unusedRun } from "../run/run-end";

export type GateOutcome = { connect: ConnectRequest; text: string } | { error: SlipsnisseError } | undefined;

/**
 * Before the model runs: every whitelisted server that signs users in (`auth`) must have a
 * connection for this member (or the team). The first one missing starts a sign-in in the
 * owner's UserConnections object (discovery and registration happen there, so bad metadata is
 * an error naming the server) and the run pauses with the connect link instead of failing. A
 * warm session answers from the pool's memoised token without a round trip.
 */
export async function connectionGate(
  env: Env,
  pool: DownstreamPool,
  skill: string,
  config: SkillConfig,
  expert: ExpertConfig,
  user: UserProps,
  origin: string,
): Promise<GateOutcome> {
  for (const serverId of Object.keys(expert.internal_tools)) {
    const server = config.servers[serverId];
    const target = server === undefined ? undefined : connectionTarget(skill, serverId, server);
    if (target === undefined) continue;
    if ((await pool.connectionNeeded(serverId)) === undefined) continue;
    const answer = await connectionsStub(env, ownerFor(target, user.userId)).startFlow(target, `${origin}${CONNECT_CALLBACK_PATH}`, user.login);
    if ("failed" in answer) return { error: new ConnectionSetupError(serverId, answer.failed) };
    const team = target.connection === "team";
    const url = `${origin}${CONNECT_PATH}/${team ? "team/" : ""}${answer.flowId}`;
    const text = team ? `An admin must connect ${serverId} for the team to continue: ${url}` : `Connect ${serverId} to continue: ${url}`;
    return { connect: { server: serverId, url, elicitationId: answer.flowId, connection: target.connection }, text };
  }
  return undefined;
}

/** Servers a client that can open a URL mid-call is asked to connect, one after another, in one run. */
const MAX_MID_CALL_CONNECTS = 4;

/**
 * The gate as a run meets it: first the flow a 2026-07-28 client's retry says its user went to
 * finish (`awaitConnect`), then the gate; with a client that can open a URL mid-call
 * (`onConnect`), the call waits while the user connects, one round per server. Undefined when
 * every server the expert uses is connected.
 */
export async function gateRun(
  env: Env,
  pool: DownstreamPool,
  run: { skill: string; config: SkillConfig; expert: ExpertConfig; user: UserProps; origin: string },
  client: { awaitConnect?: { flowId: string; connection: "user" | "team" } | undefined; onConnect?: ConnectPrompter | undefined; signal: AbortSignal },
): Promise<GateOutcome> {
  const { skill, config, expert, user, origin } = run;
  const timeoutMs = expert.user_input_timeout_ms;
  if (client.awaitConnect) await awaitFlow(env, client.awaitConnect, user.userId, timeoutMs, client.signal);
  let gate = await connectionGate(env, pool, skill, config, expert, user, origin);
  for (let round = 0; client.onConnect && gate !== undefined && "connect" in gate && round < MAX_MID_CALL_CONNECTS; round++) {
    if (!(await connectMidCall(env, gate.connect, gate.text, user.userId, client.onConnect, timeoutMs, client.signal))) break;
    gate = await connectionGate(env, pool, skill, config, expert, user, origin);
  }
  return gate;
}

/**
 * Shows the connect page to the user mid-call (URL-mode elicitation, SEP-1036) and later tells
 * the client the flow is done; passed over Durable Object RPC by a surface that can reach the
 * client mid-call (a legacy SSE stream that declared `elicitation: { url: {} }`).
 */
export type ConnectPrompter = (
  event: { kind: "open"; message: string; url: string; elicitationId: string } | { kind: "complete"; elicitationId: string },
) => Promise<string>;

const POLL_MS = 500;

/**
 * The user opens the link while the call waits: true once the flow finished (the client is then
 * sent `notifications/elicitation/complete`), false when they declined, the client failed, or
 * `timeoutMs` passed; the run then pauses with the link as usual.
 */
export async function connectMidCall(
  env: Env,
  request: ConnectRequest,
  message: string,
  userId: string,
  prompt: ConnectPrompter,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<boolean> {
  const action = await prompt({ kind: "open", message, url: request.url, elicitationId: request.elicitationId }).catch(() => "failed");
  if (action !== "accept") return false;
  if (!(await awaitFlow(env, { flowId: request.elicitationId, connection: request.connection }, userId, timeoutMs, signal))) return false;
  await prompt({ kind: "complete", elicitationId: request.elicitationId }).catch(() => undefined);
  return true;
}

/** Waits, bounded, for a flow the user is finishing in their browser; true once it finished. */
export async function awaitFlow(
  env: Env,
  flow: { flowId: string; connection: "user" | "team" },
  userId: string,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<boolean> {
  const stub = connectionsStub(env, flow.connection === "team" ? { kind: "team" } : { kind: "user", userId });
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !signal.aborted) {
    if (await stub.flowCompleted(flow.flowId)) return true;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  return false;
}

/** The run that paused before its model ran, waiting for a connection: nothing used, nothing for the thread. */
export function pausedForConnection(text: string, startedAt: number): ExpertRunResult {
  return {
    outcome: "paused",
    text,
    steps: [],
    messages: [],
    usage: unusedRun(startedAt),
  };
}
