import { env } from "cloudflare:test";
import { MockLanguageModelV4 } from "ai/test";
import { afterAll, beforeAll, expect } from "vitest";
import { replaceCatalog } from "../../../src/catalog/catalog-service";
import { setModelResolverForTests } from "../../../src/experts/models/model-resolver-override";

type GenerateResult = Awaited<ReturnType<MockLanguageModelV4["doGenerate"]>>;
type GenerateOptions = Parameters<MockLanguageModelV4["doGenerate"]>[0];

export interface ScriptedCall {
  name: string;
  /** Arguments object, or a raw string to send malformed JSON. */
  input?: Record<string, unknown> | string;
}

/** One model turn: tool calls, a text answer, or a function of the call options. */
export type ScriptedTurn =
  | { calls: ScriptedCall[]; text?: string; outputTokens?: number }
  | { text: string; outputTokens?: number; finish?: "stop" | "length" }
  | ((options: GenerateOptions) => Promise<GenerateResult> | GenerateResult);

let callCounter = 0;

export function usage(inputTokens: number, outputTokens: number): GenerateResult["usage"] {
  return {
    inputTokens: { total: inputTokens, noCache: inputTokens, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: outputTokens, text: outputTokens, reasoning: undefined },
  };
}

export function toResult(turn: Exclude<ScriptedTurn, (options: GenerateOptions) => unknown>): GenerateResult {
  if ("calls" in turn) {
    return {
      content: [
        ...(turn.text ? [{ type: "text" as const, text: turn.text }] : []),
        ...turn.calls.map((call) => ({
          type: "tool-call" as const,
          toolCallId: `call-${++callCounter}`,
          toolName: call.name,
          input: typeof call.input === "string" ? call.input : JSON.stringify(call.input ?? {}),
        })),
      ],
      finishReason: { unified: "tool-calls", raw: "tool_calls" },
      usage: usage(10, turn.outputTokens ?? 5),
      warnings: [],
    };
  }
  return {
    content: [{ type: "text", text: turn.text }],
    finishReason: { unified: turn.finish ?? "stop", raw: turn.finish ?? "stop" },
    usage: usage(10, turn.outputTokens ?? 5),
    warnings: [],
  };
}

/**
 * A MockLanguageModelV4 that plays `turns` in order (the last one repeats), keeping the options
 * of every call so tests can see the tools, messages and maxOutputTokens the runner sent.
 */
export function scriptedModel(turns: ScriptedTurn[], ids: { provider?: string; modelId?: string } = {}): MockLanguageModelV4 {
  let index = 0;
  return new MockLanguageModelV4({
    provider: ids.provider ?? "mock-provider",
    modelId: ids.modelId ?? "mock-model",
    doGenerate: async (options) => {
      const turn = turns[Math.min(index++, turns.length - 1)];
      if (!turn) throw new Error("scriptedModel needs at least one turn");
      return typeof turn === "function" ? turn(options) : toResult(turn);
    },
  });
}

export interface ScriptedModels {
  /** Every expert's next calls go to a new model playing `turns`; returned so a test can read its calls. */
  play(turns: ScriptedTurn[]): MockLanguageModelV4;
}

/** Loads `catalog` before the file's tests and answers every expert's model calls from a script. */
export function useCatalogWithScriptedModels(catalog: unknown): ScriptedModels {
  let current = scriptedModel([{ text: "no turn was scripted for this call" }]);
  beforeAll(async () => {
    expect((await replaceCatalog(env, catalog, "test")).ok).toBe(true);
    setModelResolverForTests(() => current);
  });
  afterAll(() => setModelResolverForTests(undefined));
  return {
    play(turns) {
      current = scriptedModel(turns);
      return current;
    },
  };
}

/** A gate a scripted model turn waits on until the test opens it (or the run is aborted). */
export function gate(): { opened: Promise<void>; open: () => void } {
  let open = () => {};
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}
