import { wrapLanguageModel } from "ai";
import type { LanguageModel } from "ai";
import { traceMeta, type RunTrace } from "../../downstream/trace-context";

export interface TracedModel {
  model: LanguageModel;
  /** Failed attempts before each successful model call, in call order (one per step). */
  retriesPerCall(): number[];
  /** Failed attempts since the last successful call: a call that never succeeded retried this often. */
  failedSinceLastAnswer(): number;
}

/**
 * The run's model with its trace: every provider request carries the run's `traceparent`
 * header (providers that call over HTTP send it; the Workers AI binding makes no HTTP request
 * of ours), and every attempt is counted, because the AI SDK retries 429/5xx inside one step
 * and reports only the attempt that succeeded.
 */
export function traceModelCalls(model: LanguageModel, trace: RunTrace): TracedModel {
  if (typeof model === "string") return { model, retriesPerCall: () => [], failedSinceLastAnswer: () => 0 };
  const retries: number[] = [];
  let failedAttempts = 0;
  const wrapped = wrapLanguageModel({
    model,
    middleware: {
      specificationVersion: "v4",
      transformParams: async ({ params }) => ({ ...params, headers: { ...params.headers, ...traceMeta(trace) } }),
      wrapGenerate: async ({ doGenerate }) => {
        try {
          const result = await doGenerate();
          retries.push(failedAttempts);
          failedAttempts = 0;
          return result;
        } catch (error) {
          failedAttempts++;
          throw error;
        }
      },
    },
  });
  return { model: wrapped, retriesPerCall: () => [...retries], failedSinceLastAnswer: () => failedAttempts };
}
