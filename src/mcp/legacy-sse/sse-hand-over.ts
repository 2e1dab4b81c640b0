import type { CallToolResult, JSONRPCMessage } from "@modelcontextprotocol/server";
import { answerFromRecord } from "../../experts/protocol/interrupted-run";
import { sessionStub } from "../../experts/session/session-name";
import { log } from "../../observability/logger";
import { toToolResult } from "../delivery/expert-tool-result";
import type { LedgerCall, LedgerInitialize } from "./sse-call-ledger";
import { streamIndexName } from "./sse-stream-index";

/** How often a handed-over call looks at a run that is still going (its stream alone was cut), up to the run's deadline. */
const RUN_POLL_MS = 500;

export interface ReconnectHint {
  /** The EventSource's `Last-Event-ID` (`<sessionId>:<n>`), when the client sends one. */
  lastEventId?: string;
  /** Digest of the credential the stream was opened with ("" without one). */
  client: string;
}

export interface HandedOver {
  calls: LedgerCall[];
  initialize?: LedgerInitialize;
}

const EVENT_ID = /^([0-9a-f-]{36}):\d+$/;

/**
 * A client reconnecting after its stream was cut: the calls in flight on the stream it
 * continues, taken from that stream's ledger. A `Last-Event-ID` names the stream; without
 * one (the SDK clients) it is the one cut stream of this user and skill opened with the same
 * credential, and none when several would fit (answering one client's request ids on another's
 * stream would hand it a stranger's answer). Only the user who opened a stream may take it
 * over (the ledger checks its owner).
 */
export async function takeOverCutCalls(env: Env, skill: string, userId: string, sessionId: string, hint: ReconnectHint): Promise<HandedOver> {
  const named = hint.lastEventId === undefined ? undefined : EVENT_ID.exec(hint.lastEventId)?.[1];
  const client = named === undefined ? hint.client : undefined;
  const candidates = (named !== undefined ? [named] : await streamIndex(env, skill, userId).recentStreams()).filter((id) => id !== sessionId);
  const counted = await Promise.all(
    candidates.map(async (id) => ({
      id,
      cut: await stream(env, id)
        .cutCalls(userId, client)
        .catch(() => 0),
    })),
  );
  const holding = counted.filter((candidate) => candidate.cut > 0);
  if (holding.length > 1) log("warn", "legacy SSE reconnect fits several cut streams; none is taken over", { skill, streams: holding.length });
  const only = holding.length === 1 ? holding[0] : undefined;
  if (!only) return { calls: [] };
  return stream(env, only.id).takeCutCalls(userId, client);
}

/** The JSON-RPC response a handed-over call gets: its run's outcome, waited for while it still runs. */
export async function answerOf(env: Env, skill: string, userId: string, call: LedgerCall): Promise<JSONRPCMessage> {
  const stub = sessionStub(env, skill, userId);
  let run = await stub.run(call.runId).catch(() => null);
  for (let polls = 0; run?.outcome === "running" && Date.now() < call.deadline && polls < 10_000; polls++) {
    await new Promise((resolve) => setTimeout(resolve, RUN_POLL_MS));
    run = await stub.run(call.runId).catch(() => null);
  }
  const result: CallToolResult = toToolResult(answerFromRecord(call.runId, run), call.structured);
  return { jsonrpc: "2.0", id: call.requestId, result };
}

export function streamIndex(env: Env, skill: string, userId: string) {
  return env.LEGACY_SSE.get(env.LEGACY_SSE.idFromName(streamIndexName(skill, userId)));
}

function stream(env: Env, sessionId: string) {
  return env.LEGACY_SSE.get(env.LEGACY_SSE.idFromName(sessionId));
}
