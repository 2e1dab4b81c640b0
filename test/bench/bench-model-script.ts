import { errorReply, textReply, toolCallsReply, toolResultMessages, type ChatRequest, type ScriptedReply } from "../e2e/harness/fake-openai-server";

/**
 * The zero-latency fake model's behaviour in every bench scenario, chosen by the model id the
 * expert is configured with. Parameters ride in the orchestrator's query (`steps=20`, `ms=50`),
 * which the runner passes through as the sub-agent's user message.
 */
function queryNumber(request: ChatRequest, name: string, fallback: number): number {
  const user = [...request.messages].reverse().find((message) => message.role === "user");
  const text = typeof user?.content === "string" ? user.content : JSON.stringify(user?.content ?? "");
  const match = new RegExp(`${name}=(\\d+)`).exec(text);
  return match?.[1] ? Number(match[1]) : fallback;
}

export const SHORT_ANSWER = "The document is fifty thousand bytes of repeated digits 0-9; nothing else in it.";

export function benchModelScript(request: ChatRequest): ScriptedReply {
  const results = toolResultMessages(request).length;
  switch (request.model) {
    case "one-call": {
      const sleepMs = queryNumber(request, "sleep", -1);
      const call = sleepMs >= 0 ? { name: "echo__sleep", arguments: { ms: sleepMs } } : { name: "echo__echo", arguments: { text: "ping" } };
      return results === 0 ? toolCallsReply(call) : textReply("done");
    }
    case "steps": {
      const steps = queryNumber(request, "steps", 1);
      return results < steps ? toolCallsReply({ name: "echo__echo", arguments: { text: `step ${results}` } }) : textReply("done");
    }
    case "fan-out": {
      const ms = queryNumber(request, "ms", 50);
      const calls = Array.from({ length: 6 }, () => ({ name: "echo__sleep", arguments: { ms } }));
      return results === 0 ? toolCallsReply(...calls) : textReply("done");
    }
    case "big":
      return results === 0 ? toolCallsReply({ name: "echo__big", arguments: { bytes: 50_000 } }) : textReply(SHORT_ANSWER);
    case "greet": {
      // The connections figure: greet through whichever `<server>__greet` the expert offers.
      const tool = (request.tools ?? []).map((offered) => offered.function.name).find((name) => name.endsWith("__greet")) ?? "missing__greet";
      return results === 0 ? toolCallsReply({ name: tool, arguments: { name: "bench" } }) : textReply("done");
    }
    case "no-tools":
      return textReply("done");
    default:
      return errorReply(400, `bench fake model: unknown model id ${request.model}`);
  }
}
