import { z } from "zod";
import { stripControlCharacters } from "../../untrusted/control-characters";
import { RUN_OUTCOMES } from "../core/run-types";

/**
 * What the live feed carries about a run: names, counts, step numbers, tokens, tool names and
 * statuses. Never arguments, results, answers or secrets, because every admin socket of the
 * tenant receives every event (src/experts/live/live-run-feed.ts).
 */
const NAME_MAX = 200;
const name = z.string().max(NAME_MAX);
const count = z.number().int().nonnegative();

export const liveUserSchema = z.object({ id: name, login: name });

/**
 * What a run waits on now: its model, a downstream tool (`server__tool`), a human's approval of
 * one or answer to a question, or a downstream server listing its tools. `since` is when
 * the wait began, so a page counts the seconds itself: a wait costs two events, not one a second.
 */
export const WAIT_KINDS = ["model", "tool", "approval", "question", "server"] as const;
export const liveWaitSchema = z.object({ on: z.enum(WAIT_KINDS), name: name.optional(), since: count });
export type LiveWait = z.infer<typeof liveWaitSchema>;

/** A run in flight as the feed keeps it and as a browser draws it. */
export const liveRunSchema = z.object({
  runId: name,
  skill: name,
  expert: name,
  user: liveUserSchema,
  startedAt: count,
  maxSteps: count,
  /** The last step whose model call finished (0 before the first). */
  step: count,
  /** What that step does, e.g. "calling docs__search" (tool names only). */
  activity: z.string().max(NAME_MAX),
  /** Absent between waits (the runner's own work) and in runs stored before waits were sent. */
  waiting: liveWaitSchema.optional(),
  updatedAt: count,
});
export type LiveRun = z.infer<typeof liveRunSchema>;

export const liveToolCallSchema = z.object({ name, status: name });

/** A run's end, as it is sent and as the feed keeps it among the recently ended runs. */
export const liveRunEndedSchema = z.object({
  type: z.literal("run-ended"),
  at: count,
  runId: name,
  /** Repeated so a browser that missed the start (or a feed that lost it) can still draw the row. */
  skill: name,
  expert: name,
  user: liveUserSchema,
  outcome: z.enum(RUN_OUTCOMES),
  steps: count,
  toolCalls: count,
  inputTokens: count,
  outputTokens: count,
  elapsedMs: count,
  tools: z.array(liveToolCallSchema).max(50),
});
export type LiveRunEnded = z.infer<typeof liveRunEndedSchema>;

export const liveEventSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("run-started"), at: count, run: liveRunSchema }),
  z.object({ type: z.literal("run-step"), at: count, runId: name, step: count, maxSteps: count, activity: z.string().max(NAME_MAX) }),
  z.object({ type: z.literal("run-waiting"), at: count, runId: name, waiting: liveWaitSchema.nullable() }),
  liveRunEndedSchema,
]);
export type LiveEvent = z.infer<typeof liveEventSchema>;

/** What a socket receives: every event as it happens, and on connect the runs in flight and those ended lately (newest first). */
export type LiveMessage = LiveEvent | LiveSnapshot;
export interface LiveSnapshot {
  type: "snapshot";
  at: number;
  runs: LiveRun[];
  recent: LiveRunEnded[];
}

/**
 * Names are cut rather than refused: a long name must not cost the admin the event. Tool names
 * are the model's own words and reach the live page as text: no control characters.
 */
export function cutName(name: string): string {
  const text = stripControlCharacters(name);
  return text.length > NAME_MAX ? `${text.slice(0, NAME_MAX - 1)}…` : text;
}
