import { modelMessageSchema } from "ai";
import { z } from "zod";

/** What a run had spent of its budget when it paused; a resumed run gets only the rest. */
export const budgetUsedSchema = z
  .object({
    steps: z.number().int().min(0),
    toolCalls: z.number().int().min(0),
    outputTokens: z.number().int().min(0),
    elapsedMs: z.number().min(0),
  })
  .strict();
export type BudgetUsed = z.output<typeof budgetUsedSchema>;

/**
 * The durable subset of a run paused on a question or on calls awaiting approval, stored in the session's
 * SQLite until it is answered or expires. Data only: the turns since the thread's history (the
 * user turn, the model's steps, the tool results it read, already truncated as the model saw
 * them), the calls awaiting the answer, and the budget used. Nothing live is kept (model, MCP
 * clients, abort signals, closures) and nothing secret (resolved headers, keys): those are
 * rebuilt on resume from the catalog, the session's pool and the Worker's secrets. Parsed with
 * this schema when read back, so a row that is not this shape is refused, not trusted.
 */
export const pausedRunSchema = z
  .object({
    /** The run that asked (the resumed run gets its own run id). */
    runId: z.string().min(1),
    expert: z.string().min(1),
    question: z.string(),
    /** The ask_orchestrator / ask_user calls of the paused step; the first one gets the answer. */
    askCallIds: z.array(z.string().min(1)),
    /** What it waits for: the orchestrator's answer (default), the user's answer, or approvals. */
    kind: z.enum(["orchestrator", "user", "approval"]).optional(),
    /** For kind "approval": the downstream calls awaiting approval, run or refused on resume. */
    approvals: z
      .array(
        z.object({ toolCallId: z.string().min(1), name: z.string().min(1), server: z.string().min(1), tool: z.string().min(1), input: z.unknown() }).strict(),
      )
      .optional(),
    turns: z.array(modelMessageSchema).min(1),
    used: budgetUsedSchema,
    pausedAt: z.number(),
    expiresAt: z.number(),
  })
  .strict();
export type PausedRun = z.output<typeof pausedRunSchema>;
