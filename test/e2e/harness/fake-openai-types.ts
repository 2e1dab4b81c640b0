import { z } from "zod";

/** The parts of an OpenAI chat completions request the fake reads; everything else is kept. */
export const chatRequestSchema = z.looseObject({
  model: z.string(),
  messages: z.array(
    z.looseObject({
      role: z.string(),
      content: z.unknown().optional(),
      tool_call_id: z.string().optional(),
      tool_calls: z.array(z.looseObject({ id: z.string().optional() })).optional(),
    }),
  ),
  tools: z.array(z.looseObject({ type: z.string(), function: z.looseObject({ name: z.string() }) })).optional(),
  stream: z.boolean().optional(),
});
export type ChatRequest = z.infer<typeof chatRequestSchema>;

export interface TokenUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

export interface ScriptedToolCall {
  name: string;
  /** An object (serialized for the wire) or an already-serialized JSON string. */
  arguments: unknown;
  id?: string;
}

interface ReplyCommon {
  usage?: TokenUsage;
  /** Extra latency before this reply is sent. */
  delayMs?: number;
}

export type ScriptedReply =
  | (ReplyCommon & { kind: "text"; text: string })
  | (ReplyCommon & { kind: "tool-calls"; toolCalls: ScriptedToolCall[]; text?: string })
  | (ReplyCommon & { kind: "error"; status: number; message: string; headers?: Record<string, string> });

/** What the fake answers: a queue consumed in order, or a function of the request. */
export type ReplyScript = ScriptedReply[] | ((request: ChatRequest, index: number) => ScriptedReply | Promise<ScriptedReply>);

export const textReply = (text: string, usage?: TokenUsage): ScriptedReply => ({ kind: "text", text, usage });

export const toolCallsReply = (...toolCalls: ScriptedToolCall[]): ScriptedReply => ({
  kind: "tool-calls",
  toolCalls,
});

/** `headers` are sent with the error, e.g. `{ "retry-after": "1" }`. */
export const errorReply = (status: number, message: string, headers?: Record<string, string>): ScriptedReply => ({
  kind: "error",
  status,
  message,
  ...(headers ? { headers } : {}),
});

/** The tool names a request offered the model. */
export function offeredToolNames(request: ChatRequest): string[] {
  return (request.tools ?? []).map((tool) => tool.function.name);
}

/** The tool results (role "tool" messages) a request fed back to the model, in order. */
export function toolResultMessages(request: ChatRequest): Array<{ toolCallId: string; content: string }> {
  return request.messages
    .filter((message) => message.role === "tool")
    .map((message) => ({
      toolCallId: message.tool_call_id ?? "",
      content: typeof message.content === "string" ? message.content : JSON.stringify(message.content),
    }));
}
