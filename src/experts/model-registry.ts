import type { LanguageModel } from "ai";
import type { ExpertConfig } from "../catalog/catalog-schema";
import { readSecret } from "../env";
import { GOOGLE_API_KEY_SECRET, modelIdOf, modelRefOf } from "./model-defaults";
import { MissingBaseUrlError, MissingModelApiKeyError } from "./model-errors";
import { modelResolverOverride } from "./model-resolver-override";

/**
 * The expert's language model. Providers are imported on first use so an unused provider's
 * module is never evaluated. Throws a SlipsnisseError (missing key, missing base_url) with the fix.
 */
export async function resolveModel(expert: ExpertConfig, env: Env): Promise<LanguageModel> {
  const override = modelResolverOverride();
  if (override && env.ENVIRONMENT === "test") return override(expert);

  const modelId = modelIdOf(expert);
  switch (expert.provider) {
    case "workers-ai": {
      const { createWorkersAI } = await import("workers-ai-provider");
      return createWorkersAI({ binding: env.AI })(modelId);
    }
    case "google": {
      const apiKey = readSecret(env, GOOGLE_API_KEY_SECRET);
      if (!apiKey) throw new MissingModelApiKeyError(modelRefOf(expert), GOOGLE_API_KEY_SECRET);
      const { createGoogleGenerativeAI } = await import("@ai-sdk/google");
      return createGoogleGenerativeAI({ apiKey })(modelId);
    }
    case "openai-compatible": {
      if (!expert.base_url) throw new MissingBaseUrlError(modelRefOf(expert));
      const secretName = expert.api_key_secret;
      const apiKey = secretName ? readSecret(env, secretName) : undefined;
      if (secretName && !apiKey) throw new MissingModelApiKeyError(modelRefOf(expert), secretName);
      const { createOpenAICompatible } = await import("@ai-sdk/openai-compatible");
      const provider = createOpenAICompatible({ name: "openai-compatible", baseURL: expert.base_url, ...(apiKey ? { apiKey } : {}) });
      return provider.chatModel(modelId);
    }
  }
}
