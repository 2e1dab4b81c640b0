// @ts-check
import { CliError } from "./cli-error.mjs";
import { formatProblems } from "./catalog-validator.mjs";

const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * The Worker's admin API. URL and token come from --url/--token or SLIPSNISSE_URL and
 * SLIPSNISSE_ADMIN_TOKEN; a local `npm start` Worker needs no token (loopback dev user).
 * @param {Record<string, unknown>} flags parsed options (--url, --token)
 * @param {Record<string, string | undefined>} env
 */
export function adminClient(flags, env) {
  const base = ((typeof flags.url === "string" ? flags.url : undefined) ?? env.SLIPSNISSE_URL ?? "").replace(/\/+$/, "");
  if (!base) {
    throw new CliError("No Worker URL given.", "Pass --url https://<worker>.workers.dev or set SLIPSNISSE_URL (http://127.0.0.1:8787 for `npm start`).", 2);
  }
  if (!/^https?:\/\//.test(base)) throw new CliError(`The Worker URL "${base}" is not an http(s) URL.`, "Write it like https://slipsnisse.example.workers.dev.", 2);
  const token = (typeof flags.token === "string" ? flags.token : undefined) ?? env.SLIPSNISSE_ADMIN_TOKEN;

  /**
   * @param {string} method
   * @param {string} path below /admin/api
   * @param {unknown} [body]
   * @param {number} [timeoutMs]
   * @returns {Promise<Record<string, unknown>>}
   */
  async function call(method, path, body, timeoutMs = DEFAULT_TIMEOUT_MS) {
    const url = `${base}/admin/api${path}`;
    /** @type {Record<string, string>} */
    const headers = { accept: "application/json" };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (token) headers.authorization = `Bearer ${token}`;
    let response;
    try {
      response = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(timeoutMs) });
    } catch (error) {
      const timedOut = error instanceof Error && error.name === "TimeoutError";
      throw new CliError(
        timedOut ? `The Worker at ${base} did not answer within ${timeoutMs / 1000} s.` : `Cannot reach the Worker at ${base}.`,
        "Check the URL and that the Worker is running (`npm start` serves http://127.0.0.1:8787 locally).",
      );
    }
    const text = await response.text();
    /** @type {Record<string, unknown>} */
    let parsed;
    try {
      const value = JSON.parse(text);
      parsed = value !== null && typeof value === "object" && !Array.isArray(value) ? value : {};
    } catch {
      throw new CliError(`${method} ${url} answered HTTP ${response.status} with something that is not the admin API's JSON.`, "Check that --url points at a Slipsnisse Worker (its base URL, without /admin/api).");
    }
    if (response.ok) return parsed;
    throw refusal(response.status, parsed, Boolean(token));
  }

  return {
    base,
    /** @param {string} path */
    get: (path, timeoutMs = DEFAULT_TIMEOUT_MS) => call("GET", path, undefined, timeoutMs),
    /** @param {string} path @param {unknown} body */
    put: (path, body) => call("PUT", path, body),
    /** @param {string} path @param {unknown} [body] */
    post: (path, body) => call("POST", path, body),
  };
}

/**
 * @param {number} status
 * @param {Record<string, unknown>} body
 * @param {boolean} sentToken
 */
function refusal(status, body, sentToken) {
  const error = typeof body.error === "string" ? body.error : `HTTP ${status}`;
  const fix = typeof body.fix === "string" ? body.fix : "";
  if (status === 401) {
    return new CliError(
      sentToken ? "The Worker refused the admin token (401)." : "The Worker wants an admin token (401).",
      "Pass --token or set SLIPSNISSE_ADMIN_TOKEN to the Worker's ADMIN_TOKEN secret (set it with `npx wrangler secret put ADMIN_TOKEN`).",
    );
  }
  const problems = Array.isArray(body.problems) ? body.problems : [];
  if (problems.length > 0) {
    const lines = formatProblems(/** @type {import("./catalog-validator.mjs").CatalogProblem[]} */ (problems));
    return new CliError(`The Worker refused it (HTTP ${status}), ${problems.length} problem(s):\n${lines}`, fix || "Correct each listed path as its fix says.");
  }
  return new CliError(`The Worker refused it (HTTP ${status}): ${error}`, fix || "See the message above.");
}
