import type { ExpertConfig, ProviderName } from "../../catalog/catalog-schema";
import type { ModelRef } from "./model-errors";

/** Used when an expert names a provider but no model. */
export const DEFAULT_MODEL_IDS: Record<ProviderName, string> = {
  "workers-ai": "@cf/meta/llama-3.3-70b-instruct-fp8-fast",
  google: "gemini-2.5-flash",
  // An OpenAI-compatible endpoint has no universal model id; Ollama's common small default.
  "openai-compatible": "llama3.1",
};

/**
 * For every generateText: the AI SDK's telemetry off. Slipsnisse keeps its own trace of each
 * model call (src/experts/trace), and with telemetry on (the default, even with no integration
 * registered) the SDK opens a diagnostics-channel span and copies every event through its
 * credential redaction on each call: CPU on every step for nothing read.
 */
export const AI_SDK_TELEMETRY = { isEnabled: false } as const;

export const GOOGLE_API_KEY_SECRET = "GOOGLE_GENERATIVE_AI_API_KEY";

export function modelIdOf(expert: ExpertConfig): string {
  return expert.model ?? DEFAULT_MODEL_IDS[expert.provider];
}

export function modelRefOf(expert: ExpertConfig): ModelRef {
  return { expert: expert.name, provider: expert.provider, model: modelIdOf(expert) };
}

/** The secret whose key the expert's provider sends, if any (used in error fixes, never its value). */
export function apiKeySecretOf(expert: ExpertConfig): string | undefined {
  if (expert.provider === "google") return GOOGLE_API_KEY_SECRET;
  if (expert.provider === "openai-compatible") return expert.api_key_secret;
  return undefined;
}
