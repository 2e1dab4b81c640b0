import type { CallToolResult, ResourceLink } from "@modelcontextprotocol/server";
import type { ExpertCallResult } from "../../experts/core/call-types";
import { stripControlCharacters } from "../../untrusted/control-characters";

/** A run as a resource (run-resources.ts serves it to its own user). */
export function runUri(runId: string): string {
  return `slipsnisse://runs/${runId}`;
}

/** The content item an expert answer carries, so the orchestrator fetches the trace only when it wants it. */
export function runResourceLink(runId: string): ResourceLink {
  return {
    type: "resource_link",
    uri: runUri(runId),
    name: `run-${runId}`,
    title: "This run's trace",
    description: "The expert's steps, tool calls and usage for this answer (resources/read).",
    mimeType: "text/markdown",
  };
}

/** `_meta` keys use a reverse-DNS-style prefix (MCP _meta naming rules); clients ignore unknown ones. */
export const META_USAGE = "slipsnisse.dev/usage";
export const META_THREAD = "slipsnisse.dev/thread";
export const META_RUN = "slipsnisse.dev/run";
export const META_OUTCOME = "slipsnisse.dev/outcome";
/** `{runId, traceId}`: the run to look up in the admin API and the W3C trace id its requests carried. */
export const META_TRACE = "slipsnisse.dev/trace";
/**
 * On a paused run's result: `{ question, thread, expiresAt, for, approvals? }` (ISO 8601),
 * marking the text as a question. `for` is who should answer: `orchestrator`, `user` (relay it
 * to your user) or `approval` (calls waiting to be approved, each `{ name, server, tool, input }`).
 */
export const META_QUESTION = "slipsnisse.dev/question";
/**
 * On a run paused because a downstream server needs the user to connect their account:
 * `{ server, url, connection, thread? }`. `url` is Slipsnisse's connect page; after it, call again.
 */
export const META_CONNECT = "slipsnisse.dev/connect";

/**
 * On a run that could not reach a downstream server or tool: `[{ server, tool?, reason }]` (no
 * `tool`: the server's tools were left out). The answer may still be the model's, written
 * without them; this says it was.
 */
export const META_UNAVAILABLE = "slipsnisse.dev/unavailable";

/**
 * Only the final answer reaches the orchestrator's context; steps stay in the run record. The
 * thread handle is repeated in the text because many orchestrators show the model only `content`.
 */
export function toToolResult(result: ExpertCallResult, structuredExpected = false): CallToolResult {
  // What the model and the downstream servers wrote reaches the orchestrator (and often a
  // terminal) here: answers, errors and questions lose their control characters at this exit.
  const answer = answerResult(withoutControlCharacters(result), structuredExpected);
  // A run with a trace id was recorded in the session (refusals before the run row have none): link its trace.
  if (result.traceId) answer.content.push(runResourceLink(result.runId));
  return answer;
}

function withoutControlCharacters(result: ExpertCallResult): ExpertCallResult {
  const text = stripControlCharacters(result.text);
  const unavailable = result.unavailable?.map((entry) => ({ ...entry, reason: stripControlCharacters(entry.reason) }));
  const cleaned = { ...result, text, ...(unavailable ? { unavailable } : {}) };
  if (!result.question) return cleaned;
  const { approvals, ...question } = result.question;
  const shownApprovals = approvals?.map((call) => ({ ...call, name: stripControlCharacters(call.name), input: stripControlCharacters(call.input) }));
  return { ...cleaned, question: { ...question, text: stripControlCharacters(question.text), ...(shownApprovals ? { approvals: shownApprovals } : {}) } };
}

function answerResult(result: ExpertCallResult, structuredExpected: boolean): CallToolResult {
  const meta = {
    [META_USAGE]: result.usage,
    ...(result.thread ? { [META_THREAD]: result.thread } : {}),
    [META_RUN]: result.runId,
    [META_OUTCOME]: result.outcome,
    ...(result.traceId ? { [META_TRACE]: { runId: result.runId, traceId: result.traceId } } : {}),
    ...(result.unavailable && result.unavailable.length > 0 ? { [META_UNAVAILABLE]: result.unavailable } : {}),
  };
  // A tool with an outputSchema must return structuredContent on success (the SDK refuses the
  // result otherwise), so a cancelled run of a structured expert is an error too.
  if (result.outcome === "error" || (structuredExpected && !result.structured)) {
    return { isError: true, content: [{ type: "text", text: result.text }], _meta: meta };
  }
  if (result.question && result.thread) {
    const { kind, approvals } = result.question;
    const expiresAt = new Date(result.question.expiresAt).toISOString();
    const question = { question: result.question.text, thread: result.thread, expiresAt, for: kind, ...(approvals ? { approvals } : {}) };
    return {
      content: [{ type: "text", text: pausedText(result.question.text, kind, result.thread, expiresAt) }],
      _meta: { ...meta, [META_QUESTION]: question },
    };
  }
  if (result.connect) {
    const { server, url, connection } = result.connect;
    const again = result.thread ? ` with the same arguments and "thread": "${result.thread}"` : " with the same arguments";
    return {
      content: [
        {
          type: "text",
          text: `${result.text}\n\n(open the link in a browser${connection === "team" ? " as an admin" : ""}, then call this expert again${again})`,
        },
      ],
      _meta: { ...meta, [META_CONNECT]: { server, url, connection, ...(result.thread ? { thread: result.thread } : {}) } },
    };
  }
  const trailer = result.thread ? `(thread: ${result.thread} — pass it as "thread" to ask a follow-up)` : "";
  if (result.structured) {
    // The JSON alone in the first block, for clients that read content rather than structuredContent (MCP 2025-06-18 "Structured Content").
    const content = [{ type: "text" as const, text: result.text }, ...(trailer ? [{ type: "text" as const, text: trailer }] : [])];
    return { content, structuredContent: result.structured, _meta: meta };
  }
  return { content: [{ type: "text", text: trailer ? `${result.text}\n\n${trailer}` : result.text }], _meta: meta };
}

function pausedText(text: string, kind: "orchestrator" | "user" | "approval", thread: string, expiresAt: string): string {
  if (kind === "approval") {
    return `${text}\n\n(thread: ${thread} — ask your user, then call this expert again with the same arguments, this "thread" and "approve": true to run ${text.includes("these calls") ? "them" : "it"} or false to refuse, before ${expiresAt})`;
  }
  const reply = `(thread: ${thread} — reply by calling it again with this "thread" and your reply as "answer", before ${expiresAt})`;
  if (kind === "user") return `The expert asks your user: ${text}\n\n${reply}`;
  return `The expert asks: ${text}\n\n${reply}`;
}
