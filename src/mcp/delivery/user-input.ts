import { inputRequired, inputResponse, type ElicitRequestFormParams, type InputRequiredResult, type ServerContext } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { ExpertConfig } from "../../catalog/catalog-schema";
import { unansweredText } from "../../experts/run/ask-back";
import type { ExpertCallResult, PausedAnswer, UserPrompt, UserPrompter, UserReply } from "../../experts/core/call-types";
import { stripControlCharacters } from "../../untrusted/control-characters";
import type { RequestStateFields } from "../../experts/protocol/request-states";
import type { ClientProfile } from "../inbound/client-profile";
import type { ClientRequester } from "./mid-call-requests";

/*
 * How a run reaches the human behind the MCP client, as its ClientProfile says
 * (docs/platform-notes.md#elicitation):
 * - "elicit": a 2025-era client that declared form elicitation at `initialize`: the session calls
 *   back mid-call, and the callback sends `elicitation/create` on the call's own connection. Over
 *   legacy HTTP+SSE the connection keeps its server, which sends it; on stateless Streamable HTTP
 *   the `Mcp-Session-Id` minted at `initialize` says what the client declared, the request is
 *   written onto the call's SSE stream and the reply POST reaches the run through the user's
 *   session (mid-call-requests.ts).
 * - "input-required": a 2026-07-28 request whose envelope declares elicitation. That era has no
 *   server-to-client requests; the run pauses (the same durable pause as ask-back), the call
 *   answers `input_required` with the elicitation embedded, and the client's retry, carrying the
 *   user's reply, resumes the run. SDK clients do the round trip inside `callTool`.
 * - "pause": everything else, including a stateless 2025 client that does not send back the
 *   `Mcp-Session-Id` it was given. The run pauses with a question or "approval needed" answer.
 */
export type UserChannel = { kind: "elicit"; askUser: UserPrompter } | { kind: "input-required" } | { kind: "pause" };

export function userChannel(profile: ClientProfile, ctx: ServerContext, expert: ExpertConfig, routed?: ClientRequester): UserChannel {
  if (profile.userChannel !== "elicit") return { kind: profile.userChannel };
  // The session applies the expert's timeout; the SDK's own is only a backstop a little later.
  const timeout = expert.user_input_timeout_ms + 5_000;
  // Stateless 2025 Streamable HTTP: the request goes out on the call's stream and the reply comes
  // back through the user's session (mid-call-requests.ts); a connection that keeps its server
  // (legacy SSE) uses the SDK's own request.
  const askUser: UserPrompter = routed
    ? async (prompt) => {
        const reply = await routed.request(
          "elicitation/create",
          { mode: "form", message: stripControlCharacters(prompt.message), requestedSchema: formOf(prompt) },
          timeout,
        );
        if ("error" in reply) throw new Error(`The client refused the elicitation: ${reply.error.message.slice(0, 200)}`);
        return replyOf(elicitResultSchema.parse(reply.result));
      }
    : async (prompt) => {
        const result = await ctx.mcpReq.elicitInput(
          { mode: "form", message: stripControlCharacters(prompt.message), requestedSchema: formOf(prompt) },
          { timeout },
        );
        return replyOf(result);
      };
  return { kind: "elicit", askUser };
}

const elicitResultSchema = z.looseObject({ action: z.enum(["accept", "decline", "cancel"]), content: z.record(z.string(), z.unknown()).optional() });

/** An approval is one boolean, so accepting with false is a clear "no"; a question one string. */
function formOf(prompt: UserPrompt): ElicitRequestFormParams["requestedSchema"] {
  if (prompt.kind === "approval") {
    return {
      type: "object",
      properties: { approve: { type: "boolean", title: "Allow this call", description: "Run the tool call shown above." } },
      required: ["approve"],
    };
  }
  return { type: "object", properties: { answer: { type: "string", title: "Your answer" } }, required: ["answer"] };
}

/** The elicitation result as the runner reads it; content is the client's, so it is checked. */
export function replyOf(result: { action: "accept" | "decline" | "cancel"; content?: Record<string, unknown> }): UserReply {
  if (result.action !== "accept") return { action: result.action };
  const content = contentSchema.safeParse(result.content ?? {});
  if (!content.success) return { action: "accept" };
  return {
    action: "accept",
    ...(content.data.approve === undefined ? {} : { approve: content.data.approve }),
    ...(content.data.answer === undefined ? {} : { answer: content.data.answer }),
  };
}

const contentSchema = z.object({ approve: z.boolean().optional(), answer: z.string().max(20_000).optional() }).loose();

/** The key of the one embedded request an input_required answer carries. */
const INPUT_KEY = "slipsnisse_user_input";

/**
 * What the `requestState` handle stands for (the user's session keeps it, request-states.ts, bound to the
 * skill and expert, and uses it once): the thread, and the kind of reply the run waits for.
 */
const requestStateSchema = z.object({ v: z.literal(1), thread: z.string().min(1).max(200), kind: z.enum(["user", "approval"]) }).strict();
type RequestState = z.output<typeof requestStateSchema>;

/** Keeps a state for the retry and answers the handle the client echoes (the session's request-states.ts). */
export type RequestStateSeal = (state: RequestStateFields) => Promise<string>;

/** A paused run whose question or approval should go to the user as an `input_required` answer, if it is one. */
export async function inputRequiredFor(result: ExpertCallResult, seal: RequestStateSeal): Promise<InputRequiredResult | undefined> {
  const question = result.question;
  if (result.outcome !== "paused" || !question || !result.thread || question.kind === "orchestrator") return undefined;
  const state: RequestState = { v: 1, thread: result.thread, kind: question.kind };
  return inputRequired({
    inputRequests: { [INPUT_KEY]: inputRequired.elicit(elicitationFor({ ...question, kind: question.kind })) },
    requestState: await seal(state),
  });
}

/** The form elicitation that puts a paused run's question, or the calls it waits to have approved, to its user. */
export function elicitationFor(question: PausedAnswer & { kind: "user" | "approval" }): {
  message: string;
  requestedSchema: ElicitRequestFormParams["requestedSchema"];
} {
  const prompt: UserPrompt =
    question.kind === "approval"
      ? { kind: "approval", message: approvalPrompt(question), server: "", tool: "", arguments: "" }
      : { kind: "question", message: question.text };
  return { message: stripControlCharacters(prompt.message), requestedSchema: formOf(prompt) };
}

function approvalPrompt(question: PausedAnswer): string {
  const calls = (question.approvals ?? []).map((call) => `${call.name} with these arguments:\n${call.input}`);
  return `The expert wants to call ${calls.join("\nand ")}\nAllow ${calls.length === 1 ? "this call" : "these calls"}?`;
}

/**
 * What a retried 2026-07-28 call decides: the thread and the user's approval or answer;
 * undefined when it is not a retry. `opened` is the state its handle stood for.
 */
export function retriedReply(
  ctx: ServerContext,
  expert: ExpertConfig,
  opened: unknown,
): { thread: string; approve: boolean; refusal?: "declined" | "cancelled" } | { thread: string; answer: string } | undefined {
  const state = requestStateSchema.safeParse(opened).data;
  if (!state) return undefined;
  const view = inputResponse(ctx.mcpReq.inputResponses, INPUT_KEY);
  const reply: UserReply | { action: "failed" } = view.kind === "elicit" ? replyOf(view) : { action: "failed" };
  return { thread: state.thread, ...decisionOf(state.kind, reply, expert.user_input_timeout_ms) };
}

/**
 * What the user's elicitation reply decides for the paused run: an approval only on an explicit
 * accept with `approve: true`; a question's answer, or the text saying it went unanswered.
 */
export function decisionOf(
  kind: "user" | "approval",
  reply: UserReply | { action: "failed" },
  timeoutMs: number,
): { approve: boolean; refusal?: "declined" | "cancelled" } | { answer: string } {
  if (kind === "approval") {
    const approve = reply.action === "accept" && reply.approve === true;
    return { approve, ...(approve ? {} : { refusal: reply.action === "cancel" ? ("cancelled" as const) : ("declined" as const) }) };
  }
  if (reply.action === "accept" && reply.answer !== undefined) return { answer: reply.answer };
  return { answer: unansweredText(reply.action === "accept" ? "decline" : reply.action, timeoutMs) };
}
