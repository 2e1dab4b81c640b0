// The demo catalog with its model chosen from the environment: an explicit OpenAI-compatible
// endpoint, else Gemini when .dev.vars has a key, else Workers AI (the production default).
import { readFileSync } from "node:fs";

/** The version note `npm start` gives the demo; it replaces a catalog only while that is still the demo. */
export const DEMO_NOTE = "demo catalog loaded by npm start";

const base = JSON.parse(readFileSync(new URL("../src/demo/demo-catalog.json", import.meta.url), "utf8"));

export function demoCatalog({ env, devVars }) {
  const document = structuredClone(base);
  const expert = document.skills.default.experts[0];
  if (env.SLIPSNISSE_DEMO_BASE_URL) {
    Object.assign(expert, { provider: "openai-compatible", base_url: env.SLIPSNISSE_DEMO_BASE_URL, model: env.SLIPSNISSE_DEMO_MODEL ?? "qwen2.5:7b" });
  } else if (/^GOOGLE_GENERATIVE_AI_API_KEY=\S+/m.test(devVars)) {
    Object.assign(expert, { provider: "google", model: env.SLIPSNISSE_DEMO_MODEL ?? "gemini-2.5-flash" });
  }
  return { document, describe: `${expert.provider}${expert.model ? ` / ${expert.model}` : ""}` };
}
