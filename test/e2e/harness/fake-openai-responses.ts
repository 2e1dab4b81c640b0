import type { ScriptedReply, ScriptedToolCall, TokenUsage } from "./fake-openai-types";

type SuccessReply = Exclude<ScriptedReply, { kind: "error" }>;

const defaultUsage: TokenUsage = { prompt_tokens: 10, completion_tokens: 5 };

function wireUsage(usage: TokenUsage | undefined) {
  const { prompt_tokens, completion_tokens } = usage ?? defaultUsage;
  return { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens };
}

function wireToolCalls(toolCalls: ScriptedToolCall[], requestIndex: number) {
  return toolCalls.map((call, i) => ({
    id: call.id ?? `call_${requestIndex}_${i}`,
    type: "function" as const,
    function: {
      name: call.name,
      arguments: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments ?? {}),
    },
  }));
}

function finishReason(reply: SuccessReply): string {
  return reply.kind === "tool-calls" ? "tool_calls" : "stop";
}

function replyText(reply: SuccessReply): string | null {
  return reply.kind === "text" ? reply.text : (reply.text ?? null);
}

/** A non-streaming `chat.completion` body. */
export function completionBody(reply: SuccessReply, model: string, requestIndex: number): object {
  const toolCalls = reply.kind === "tool-calls" ? wireToolCalls(reply.toolCalls, requestIndex) : undefined;
  return {
    id: `chatcmpl-fake-${requestIndex}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: { role: "assistant", content: replyText(reply), ...(toolCalls ? { tool_calls: toolCalls } : {}) },
        finish_reason: finishReason(reply),
      },
    ],
    usage: wireUsage(reply.usage),
  };
}

/** The `data:` payloads of a streamed reply, in OpenAI's chunk format, ending with `[DONE]`. */
export function streamEvents(reply: SuccessReply, model: string, requestIndex: number): string[] {
  const base = { id: `chatcmpl-fake-${requestIndex}`, object: "chat.completion.chunk", created: Math.floor(Date.now() / 1000), model };
  const chunk = (delta: object, finish: string | null = null, extra: object = {}) =>
    JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }], ...extra });
  const events = [chunk({ role: "assistant", content: "" })];
  const text = replyText(reply);
  if (text) {
    const middle = Math.ceil(text.length / 2);
    events.push(chunk({ content: text.slice(0, middle) }));
    if (middle < text.length) events.push(chunk({ content: text.slice(middle) }));
  }
  if (reply.kind === "tool-calls") {
    wireToolCalls(reply.toolCalls, requestIndex).forEach((call, index) => {
      events.push(chunk({ tool_calls: [{ index, ...call }] }));
    });
  }
  events.push(chunk({}, finishReason(reply), { usage: wireUsage(reply.usage) }));
  events.push("[DONE]");
  return events;
}

export function errorBody(message: string, status: number): object {
  return { error: { message, type: status >= 500 ? "server_error" : "invalid_request_error", code: status } };
}
