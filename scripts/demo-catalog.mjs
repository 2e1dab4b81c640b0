// The demo catalog with its model chosen from the environment: an explicit OpenAI-compatible
// endpoint, else Gemini when .dev.vars has a key, else a local model server npm start found,
// else Workers AI (the production default, which `wrangler dev --local` cannot run).
import { readFileSync } from "node:fs";

/** The version note `npm start` gives the demo; it replaces a catalog only while that is still the demo. */
export const DEMO_NOTE = "demo catalog loaded by npm start";

const base = JSON.parse(readFileSync(new URL("../src/demo/demo-catalog.json", import.meta.url), "utf8"));

/** Whether the demo's model is settled without looking for a local server. */
export function demoModelConfigured({ env, devVars }) {
  return Boolean(env.SLIPSNISSE_DEMO_BASE_URL) || hasGeminiKey(devVars);
}

/**
 * @param {{ env: Record<string, string | undefined>, devVars: string, found?: { baseUrl: string, model: string } }} options
 *   found: a local OpenAI-compatible server (scripts/local-model-probe.mjs)
 * @returns {{ document: object, describe: string, provider: string }}
 */
export function demoCatalog({ env, devVars, found }) {
  const document = structuredClone(base);
  const expert = document.skills.default.experts[0];
  if (env.SLIPSNISSE_DEMO_BASE_URL) {
    Object.assign(expert, { provider: "openai-compatible", base_url: env.SLIPSNISSE_DEMO_BASE_URL, model: env.SLIPSNISSE_DEMO_MODEL ?? "qwen2.5:7b" });
  } else if (hasGeminiKey(devVars)) {
    Object.assign(expert, { provider: "google", model: env.SLIPSNISSE_DEMO_MODEL ?? "gemini-2.5-flash" });
  } else if (found) {
    Object.assign(expert, { provider: "openai-compatible", base_url: found.baseUrl, model: found.model });
  }
  const provider = expert.provider ?? "workers-ai";
  return { document, provider, describe: `${provider}${expert.model ? ` / ${expert.model}` : ""}` };
}

function hasGeminiKey(devVars) {
  return /^GOOGLE_GENERATIVE_AI_API_KEY=\S+/m.test(devVars);
}
