import { wrapLanguageModel } from "ai";
import type { LanguageModel } from "ai";

export interface TrackedModel {
  model: LanguageModel;
  /** The error of the latest model call if it failed, undefined once a call succeeds. */
  pendingFailure(): unknown;
}

/**
 * Remembers the last failed model call. Retries (model-retry.ts) report an error only when they
 * end, so when the run's clock cuts a retry wait short this is how the runner can still say the
 * provider was failing rather than just "timeout".
 */
export function trackModelFaults(model: LanguageModel): TrackedModel {
  let failure: unknown;
  if (typeof model === "string") return { model, pendingFailure: () => undefined };
  const wrapped = wrapLanguageModel({
    model,
    middleware: {
      specificationVersion: "v4",
      wrapGenerate: async ({ doGenerate }) => {
        try {
          const result = await doGenerate();
          failure = undefined;
          return result;
        } catch (error) {
          failure = error;
          throw error;
        }
      },
    },
  });
  return { model: wrapped, pendingFailure: () => failure };
}
