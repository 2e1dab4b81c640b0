import type { ExpertConfig } from "../catalog/catalog-schema";
import { guardedOutboundFetch } from "../downstream/guarded-fetch";
import { isLocalDevelopment, readSecret } from "../env";
import { SlipsnisseError } from "../errors";
import { apiKeySecretOf, modelIdOf, modelRefOf } from "../experts/models/model-defaults";
import { UnsafeModelEndpointError } from "../experts/models/model-errors";
import { probeModel, type ModelProbeResult } from "./model-probe";

export type ModelStatus = "usable" | "unusable" | "unverified";

/** One provider configuration (provider, model, endpoint, key secret) and the experts using it. */
export interface ModelReport {
  provider: ExpertConfig["provider"];
  model: string;
  baseUrl?: string;
  /** The secret's name, never its value. */
  apiKeySecret?: string;
  keyPresent?: boolean;
  endpointReachable?: boolean;
  experts: string[];
  status: ModelStatus;
  detail: string;
  /** With `?probe=1`: one real one-token call's outcome. */
  probe?: ModelProbeResult;
}

export interface ReportOptions {
  /** Milliseconds for one probe call; without it no model is called. */
  probeTimeoutMs?: number;
}

export interface ExpertRef {
  skill: string;
  expert: ExpertConfig;
}

const REACH_TIMEOUT_MS = 3_000;

/**
 * Whether each configured model can be used from this deployment, without spending tokens: the
 * key secret is set, the AI binding exists, an OpenAI-compatible endpoint answers HTTP. A model
 * that passes may still refuse a request (wrong model id, quota); the run then says so.
 */
export async function reportModels(env: Env, experts: readonly ExpertRef[], options: ReportOptions = {}): Promise<ModelReport[]> {
  const groups = new Map<string, { expert: ExpertConfig; users: string[] }>();
  for (const { skill, expert } of experts) {
    const key = JSON.stringify([expert.provider, modelIdOf(expert), expert.base_url ?? null, apiKeySecretOf(expert) ?? null]);
    const group = groups.get(key) ?? { expert, users: [] };
    group.users.push(`${skill}/${expert.name}`);
    groups.set(key, group);
  }
  return Promise.all(
    [...groups.values()].map(async ({ expert, users }) => {
      const report = await reportOne(env, expert, users);
      if (options.probeTimeoutMs === undefined) return report;
      return { ...report, probe: await probeModel(env, expert, options.probeTimeoutMs) };
    }),
  );
}

async function reportOne(env: Env, expert: ExpertConfig, users: string[]): Promise<ModelReport> {
  const secret = apiKeySecretOf(expert);
  const base = {
    provider: expert.provider,
    model: modelIdOf(expert),
    experts: users,
    ...(expert.base_url === undefined ? {} : { baseUrl: expert.base_url }),
    ...(secret === undefined ? {} : { apiKeySecret: secret, keyPresent: readSecret(env, secret) !== undefined }),
  };
  if (secret !== undefined && !base.keyPresent) {
    return {
      ...base,
      status: "unusable",
      detail: `the secret ${secret} is not set. Set it with \`npx wrangler secret put ${secret}\` (locally: a line in .dev.vars).`,
    };
  }
  switch (expert.provider) {
    case "workers-ai":
      return { ...base, ...workersAi(env) };
    case "google":
      return { ...base, status: "usable", detail: "the API key is set (its validity is checked on the first call)." };
    case "openai-compatible":
      return { ...base, ...(await openAiCompatible(env, expert, secret)) };
  }
}

function workersAi(env: Env): Pick<ModelReport, "status" | "detail"> {
  const binding: unknown = Reflect.get(env, "AI");
  if (typeof binding !== "object" || binding === null) {
    return { status: "unusable", detail: 'this deployment has no AI binding. Add `[ai] binding = "AI"` to its wrangler.toml environment and deploy again.' };
  }
  if (isLocalDevelopment(env)) {
    return {
      status: "unverified",
      detail: "the AI binding only runs remotely: under `wrangler dev --local` (npm start) it fails. Run `npx wrangler login`, then `npm run start:remote`.",
    };
  }
  return { status: "usable", detail: "the AI binding is present." };
}

async function openAiCompatible(
  env: Env,
  expert: ExpertConfig,
  secret: string | undefined,
): Promise<Pick<ModelReport, "status" | "detail" | "endpointReachable">> {
  if (!expert.base_url) return { status: "unusable", detail: "no base_url: set it to the endpoint, e.g. http://127.0.0.1:11434/v1." };
  const apiKey = secret ? readSecret(env, secret) : undefined;
  const url = `${expert.base_url.replace(/\/+$/, "")}/models`;
  // The probe goes where the expert's calls go, so it passes the same guard (and says why not).
  const fetch = guardedOutboundFetch((origin, reason) => new UnsafeModelEndpointError(modelRefOf(expert), origin, reason), env);
  try {
    const response = await fetch(url, { headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {}, signal: AbortSignal.timeout(REACH_TIMEOUT_MS) });
    await response.body?.cancel();
    if (response.status === 401 || response.status === 403) {
      const fix = secret ? `check the value of ${secret}` : "set `api_key_secret` on the expert and put the key in that secret";
      return { status: "unusable", endpointReachable: true, detail: `the endpoint refused the request (HTTP ${response.status}): ${fix}.` };
    }
    return { status: "usable", endpointReachable: true, detail: `the endpoint answered (GET /models: HTTP ${response.status}).` };
  } catch (error) {
    if (SlipsnisseError.is(error)) return { status: "unusable", endpointReachable: false, detail: error.toolMessage };
    const reason = error instanceof Error && error.name === "TimeoutError" ? `no answer within ${REACH_TIMEOUT_MS} ms` : "the connection failed";
    return {
      status: "unusable",
      endpointReachable: false,
      detail: `${expert.base_url} is not reachable from the Worker (${reason}). Check base_url and that the server is up and public.`,
    };
  }
}
