import type { LanguageModel } from "ai";
import type { ExpertConfig } from "../../catalog/catalog-schema";
import { guardedOutboundFetch, type OutboundFetch } from "../../downstream/guarded-fetch";
import { capResponseBytes } from "../../downstream/response-byte-cap";
import { readSecret } from "../../env";
import { GOOGLE_API_KEY_SECRET, modelIdOf, modelRefOf } from "./model-defaults";
import { MissingBaseUrlError, MissingModelApiKeyError, ModelResponseTooLargeError, UnsafeModelEndpointError } from "./model-errors";
import { modelResolverOverride } from "./model-resolver-override";

/**
 * Built models per env (the ExpertSession's env lives as long as the object), keyed by everything
 * a model is built from, the key's value included, so a rotated secret builds a new one. Building
 * an openai-compatible chat model constructs its zod response schemas: about 1.9 ms of CPU per
 * expert call in a profile (test/bench, figure P); the model objects hold no per-call state.
 */
const MEMO_LIMIT = 32;

/**
 * The most one model response may carry, counted as it streams (response-byte-cap.ts). A
 * generateText answer of 200k output tokens is about 1 MB of JSON; a body far past that is not a
 * model's answer, and the isolate has 128 MB for every run of the session.
 */
export const MODEL_RESPONSE_MAX_BYTES = 8 * 1024 * 1024;

function capModelResponses(expert: ExpertConfig, fetch: OutboundFetch): OutboundFetch {
  return capResponseBytes(fetch, MODEL_RESPONSE_MAX_BYTES, () => new ModelResponseTooLargeError(modelRefOf(expert), MODEL_RESPONSE_MAX_BYTES));
}
const memo = new WeakMap<Env, Map<string, Promise<LanguageModel>>>();

/**
 * The expert's language model. Providers are imported on first use so an unused provider's
 * module is never evaluated. Throws a SlipsnisseError (missing key, missing base_url) with the fix.
 */
export async function resolveModel(expert: ExpertConfig, env: Env): Promise<LanguageModel> {
  const override = modelResolverOverride();
  if (override && env.ENVIRONMENT === "test") return override(expert);

  const modelId = modelIdOf(expert);
  const apiKey = apiKeyOf(expert, env);
  const key = JSON.stringify([expert.provider, modelId, expert.base_url ?? null, apiKey ?? null]);
  let models = memo.get(env);
  if (!models) {
    models = new Map();
    memo.set(env, models);
  }
  const known = models.get(key);
  if (known) return known;
  const built = buildModel(expert, env, modelId, apiKey);
  if (models.size >= MEMO_LIMIT) models.clear();
  models.set(key, built);
  // A failed build (e.g. a provider module that would not load) is not remembered.
  built.catch(() => models.delete(key));
  return built;
}

/** The key the expert's provider needs; throws when it is configured but not set. */
function apiKeyOf(expert: ExpertConfig, env: Env): string | undefined {
  switch (expert.provider) {
    case "workers-ai":
      return undefined;
    case "google": {
      const apiKey = readSecret(env, GOOGLE_API_KEY_SECRET);
      if (!apiKey) throw new MissingModelApiKeyError(modelRefOf(expert), GOOGLE_API_KEY_SECRET);
      return apiKey;
    }
    case "openai-compatible": {
      if (!expert.base_url) throw new MissingBaseUrlError(modelRefOf(expert));
      const secretName = expert.api_key_secret;
      const apiKey = secretName ? readSecret(env, secretName) : undefined;
      if (secretName && !apiKey) throw new MissingModelApiKeyError(modelRefOf(expert), secretName);
      return apiKey;
    }
  }
}

async function buildModel(expert: ExpertConfig, env: Env, modelId: string, apiKey: string | undefined): Promise<LanguageModel> {
  switch (expert.provider) {
    case "workers-ai": {
      const { createWorkersAI } = await import("workers-ai-provider");
      return createWorkersAI({ binding: env.AI })(modelId);
    }
    case "google": {
      const { createGoogleGenerativeAI } = await import("@ai-sdk/google");
      return createGoogleGenerativeAI({ apiKey, fetch: capModelResponses(expert, (input, init) => fetch(input, init)) })(modelId);
    }
    case "openai-compatible": {
      const { createOpenAICompatible } = await import("@ai-sdk/openai-compatible");
      // A base_url is an outbound endpoint like a downstream server: the same SSRF guard, every hop.
      const fetch = capModelResponses(
        expert,
        guardedOutboundFetch((origin, reason) => new UnsafeModelEndpointError(modelRefOf(expert), origin, reason), env),
      );
      const provider = createOpenAICompatible({ name: "openai-compatible", baseURL: expert.base_url ?? "", fetch, ...(apiKey ? { apiKey } : {}) });
      return provider.chatModel(modelId);
    }
  }
}
