import { waitUntil } from "cloudflare:workers";
import type { ExpertSession } from "../../experts/session/expert-session";
import type { StepProgress } from "../../experts/core/run-types";
import type { ResumableStreamRef, StreamReplay } from "../../experts/protocol/resumable-streams";
import { toToolResult } from "./expert-tool-result";
import { resumeGraceMs } from "./resume-timing";

/*
 * Resumable streams (2025-11-25 Streamable HTTP, "Resumability and Redelivery"): a 2025-11-25
 * `tools/call` answered as SSE opens with a priming event (an id and `retry`), and each event
 * carries an id (CallStream). When the connection drops, the run goes on in the user's session,
 * which keeps the call's progress and answer (resumable-streams.ts); the client's GET with
 * `Last-Event-ID` gets the events after that one and the answer, from any Worker instance.
 * Which run and request a stream id names is durable in the session, so after a restart that
 * cut the run, a resume is answered at once with the run's outcome (a tool error saying it was
 * interrupted and can be retried) instead of a 404 the client cannot act on.
 */

/** How long a resumed stream waits for the run per round; a keep-alive goes out between rounds. */
const ROUND_MS = 15_000;
/** Enough rounds for the longest budget (the session ends the stream at the run's deadline first). */
const MAX_ROUNDS = 60;
const EVENT_ID = /^([0-9a-f-]{36}):(\d{1,6})$/;

/** The stream and event a `Last-Event-ID` header names, when it is one of ours. */
export function lastEventOf(request: Request): { stream: string; seq: number } | undefined {
  const match = EVENT_ID.exec(request.headers.get("last-event-id") ?? "");
  return match?.[1] && match[2] ? { stream: match[1], seq: Number(match[2]) } : undefined;
}

/** The progress notification a call sends per step, on its stream or on a resumed one. */
export function progressNotification(progressToken: string | number, progress: StepProgress) {
  return {
    method: "notifications/progress" as const,
    params: { progressToken, progress: progress.step, total: progress.maxSteps, message: progress.message },
  };
}

export function streamRef(
  id: string,
  requestId: string | number,
  progressToken: string | number | undefined,
  structuredExpected: boolean,
  timeoutMs: number,
): ResumableStreamRef {
  return { id, requestId, structuredExpected, timeoutMs, ...(progressToken === undefined ? {} : { progressToken }) };
}

type StreamSession = Pick<ExpertSession, "resumeStream" | "streamDropped">;

/**
 * The resumed stream for `Last-Event-ID`; null when the caller's session knows no such stream
 * (another user's, or long ended). `session` gives a stub of the caller's session: a fresh one
 * after a call on the last one failed (the object restarted: a stub that saw a reset stays
 * broken), and the restarted session answers from the run's record (interrupted).
 */
export async function resumedStream(session: () => StreamSession, last: { stream: string; seq: number }): Promise<Response | null> {
  // This connection's name in the session: its drop gives up the run only if no other connection reads the stream.
  const reader = crypto.randomUUID();
  let stub = session();
  const read = async (after: number, waitMs: number): Promise<StreamReplay | null> => {
    try {
      return await stub.resumeStream(last.stream, after, waitMs, reader);
    } catch {
      stub = session();
      return stub.resumeStream(last.stream, after, waitMs, reader);
    }
  };
  const first = await read(last.seq, 0);
  if (!first) return null;
  const encoder = new TextEncoder();
  const frame = (seq: number, message: Record<string, unknown>) =>
    encoder.encode(`event: message\nid: ${last.stream}:${seq}\ndata: ${JSON.stringify({ jsonrpc: "2.0", ...message })}\n\n`);
  let after = last.seq;
  let gone = false;
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      let replay: StreamReplay | null = first;
      for (let round = 0; replay && !gone && round < MAX_ROUNDS; round++) {
        const token = replay.ref.progressToken;
        for (const event of replay.progress) if (token !== undefined) controller.enqueue(frame(event.seq, progressNotification(token, event.progress)));
        after = replay.progress.at(-1)?.seq ?? after;
        if (replay.result) {
          const answer = toToolResult(replay.result.result, replay.ref.structuredExpected);
          controller.enqueue(frame(replay.result.seq, { id: replay.ref.requestId, result: answer }));
          break;
        }
        controller.enqueue(encoder.encode(": keepalive\n\n"));
        replay = await read(after, ROUND_MS).catch(() => null);
      }
      if (!gone) controller.close();
    },
    // The resumed connection dropped as well: the same grace before the run is given up.
    cancel() {
      gone = true;
      waitUntil(stub.streamDropped(last.stream, resumeGraceMs(first.ref.timeoutMs), reader).catch(() => undefined));
    },
  });
  return new Response(body, { headers: { "content-type": "text/event-stream", "cache-control": "no-cache" } });
}
