import { generateText } from "ai";
import type { ExpertConfig } from "../catalog/catalog-schema";
import { describeModelError } from "../experts/models/describe-model-error";
import { AI_SDK_TELEMETRY, modelIdOf } from "../experts/models/model-defaults";
import { resolveModel } from "../experts/models/model-registry";
import { ModelProbeTimedOutError } from "./model-probe-errors";

/** One real, minimal call's outcome: never the key, only the error as the runner would word it. */
export type ModelProbeResult = { ok: true; latencyMs: number } | { ok: false; latencyMs: number; error: { kind: string; message: string } };

export const DEFAULT_PROBE_TIMEOUT_MS = 5_000;

/**
 * A one-token generateText through the runner's own model resolution (so the same key lookup,
 * base_url guard and provider client), no retries, bounded by `timeoutMs`. It spends tokens, so
 * it runs only when asked (`?probe=1`).
 */
export async function probeModel(env: Env, expert: ExpertConfig, timeoutMs = DEFAULT_PROBE_TIMEOUT_MS): Promise<ModelProbeResult> {
  const started = performance.now();
  const signal = AbortSignal.timeout(timeoutMs);
  const elapsed = () => Math.round(performance.now() - started);
  try {
    const model = await resolveModel(expert, env);
    await generateText({ model, prompt: "Reply with one word: ok", maxOutputTokens: 1, maxRetries: 0, telemetry: AI_SDK_TELEMETRY, abortSignal: signal });
    return { ok: true, latencyMs: elapsed() };
  } catch (error) {
    const described = signal.aborted ? new ModelProbeTimedOutError(expert.provider, modelIdOf(expert), timeoutMs) : describeModelError(error, expert);
    return { ok: false, latencyMs: elapsed(), error: { kind: described.kind, message: described.toolMessage } };
  }
}
