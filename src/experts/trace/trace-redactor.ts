import type { ExpertConfig, SkillConfig } from "../../catalog/catalog-schema";
import { readSecret } from "../../env";
import { catalogClientSecretForms } from "../../downstream/connections/client-secret-forms";
import { redactSecretValues as redactValues, referencedSecretNames } from "../../downstream/secret-headers";
import { GOOGLE_API_KEY_SECRET } from "../models/model-defaults";
import type { Redact } from "../core/trace-excerpt";
import { redactCredentialShapes as redactPatterns } from "../models/redact-credentials";

/**
 * What scrubs every text a run record stores: the values of every secret the skill's server
 * headers reference (`${NAME}`), the client secrets of servers with `auth` in every form they are
 * sent in, the expert's provider API key, and anything shaped like a
 * credential (bearer tokens, key shapes). The inbound token never reaches the session at all;
 * the patterns still catch one pasted into arguments.
 */
export function traceRedactor(env: Env, skill: SkillConfig, expert: ExpertConfig | undefined): Redact {
  const names = new Set<string>();
  for (const server of Object.values(skill.servers)) for (const name of referencedSecretNames(server.headers)) names.add(name);
  if (expert?.provider === "google") names.add(GOOGLE_API_KEY_SECRET);
  if (expert?.api_key_secret) names.add(expert.api_key_secret);
  const values = [...names].flatMap((name) => {
    const value = readSecret(env, name);
    return value === undefined ? [] : [value];
  });
  // A pre-registered OAuth client's secret, in every form it is sent in (an echoing token endpoint).
  for (const server of Object.values(skill.servers)) values.push(...catalogClientSecretForms(env, server.auth));
  return (text) => redactPatterns(redactValues(text, values));
}
