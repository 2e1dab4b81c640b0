// Finds a local OpenAI-compatible model server for the demo expert, so a first `npm start` on a
// machine that runs Ollama (or LM Studio, llama.cpp, vLLM) answers its first call without setup.

/** Each server's default port; SLIPSNISSE_DEMO_PROBE_PORTS replaces the list ("" probes nothing). */
const KNOWN_SERVERS = [
  { port: 11434, name: "Ollama" },
  { port: 1234, name: "LM Studio" },
  { port: 8080, name: "llama.cpp" },
  { port: 8000, name: "vLLM" },
];

// A probe that finds nothing must not hold up startup: every port at once, each bounded.
const PROBE_TIMEOUT_MS = 300;

// The demo expert calls the docs server's tools, so the model must call tools. Model ids name
// their family ("qwen2.5:7b", "Qwen/Qwen3-8B", "lmstudio-community/Meta-Llama-3.1-8B-Instruct-GGUF");
// families trained for tool calling, best first.
const TOOL_CAPABLE = [
  /qwen3/i,
  /qwen-?2\.5/i,
  /llama-?3\.[1-9]|llama-?4/i,
  /mistral-?(nemo|small)/i,
  /gpt-oss/i,
  /hermes/i,
  /command-?r/i,
  /granite-?3/i,
  /firefunction/i,
];
// Listed by the same endpoint but unable to chat.
const NOT_CHAT = /embed|rerank|whisper|tts|bge-|minilm/i;

/**
 * The ports to probe: SLIPSNISSE_DEMO_PROBE_PORTS ("11434,1234"; empty for none) or the known
 * servers', never npm start's own.
 * @param {Record<string, string | undefined>} env
 * @param {number} ownPort
 * @returns {Array<{ port: number, name: string }>}
 */
export function probeTargets(env, ownPort) {
  const listed = env.SLIPSNISSE_DEMO_PROBE_PORTS;
  const targets =
    listed === undefined
      ? KNOWN_SERVERS
      : listed
          .split(",")
          .map((text) => Number(text.trim()))
          .filter((port) => Number.isInteger(port) && port > 0 && port < 65536)
          .map((port) => KNOWN_SERVERS.find((known) => known.port === port) ?? { port, name: "a server" });
  return targets.filter(({ port }) => port !== ownPort);
}

/**
 * @typedef {{ name: string, port: number, baseUrl: string, model: string, toolCapable: boolean }} FoundServer
 * @typedef {{ name: string, port: number }} EmptyServer a server that answered but lists no chat model
 */

/**
 * Asks every target's `GET /v1/models` at once; the first target (in list order) with a chat
 * model wins. `model` overrides the choice (SLIPSNISSE_DEMO_MODEL).
 * @param {Array<{ port: number, name: string }>} targets
 * @param {string | undefined} model
 * @returns {Promise<{ found?: FoundServer, empty: EmptyServer[] }>}
 */
export async function findLocalModelServer(targets, model) {
  const answers = await Promise.all(targets.map(async (target) => ({ ...target, ids: await listModels(target.port) })));
  const empty = [];
  for (const { port, name, ids } of answers) {
    if (ids === undefined) continue;
    const chat = ids.filter((id) => !NOT_CHAT.test(id));
    const picked = model ?? pickModel(chat);
    if (picked === undefined) {
      empty.push({ name, port });
      continue;
    }
    const toolCapable = TOOL_CAPABLE.some((family) => family.test(picked));
    return { found: { name, port, baseUrl: `http://127.0.0.1:${port}/v1`, model: picked, toolCapable }, empty };
  }
  return { empty };
}

/**
 * The first listed model of the best tool-capable family, else the first listed.
 * @param {string[]} ids
 */
export function pickModel(ids) {
  for (const family of TOOL_CAPABLE) {
    const match = ids.find((id) => family.test(id));
    if (match !== undefined) return match;
  }
  return ids[0];
}

/** @param {number} port @returns {Promise<string[] | undefined>} the model ids, or undefined if nothing OpenAI-like answered */
async function listModels(port) {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/v1/models`, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
    if (!response.ok) return undefined;
    const body = await response.json();
    if (!Array.isArray(body?.data)) return undefined;
    return body.data.map((entry) => entry?.id).filter((id) => typeof id === "string" && id.length > 0);
  } catch {
    return undefined;
  }
}
