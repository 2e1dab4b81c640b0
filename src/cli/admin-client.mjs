// @ts-check
import { CliError } from "./cli-error.mjs";
import { formatProblems } from "./catalog-validator.mjs";
import { localAdminToken } from "./local-admin-token.mjs";

const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * The Worker's admin API. URL and token come from --url/--token or SLIPSNISSE_URL and
 * SLIPSNISSE_ADMIN_TOKEN; for a loopback URL without either token, the one `npm start` wrote.
 * @param {Record<string, unknown>} flags parsed options (--url, --token)
 * @param {Pick<import("./io.mjs").CliIo, "env" | "cwd">} io
 */
export function adminClient(flags, { env, cwd }) {
  const base = ((typeof flags.url === "string" ? flags.url : undefined) ?? env.SLIPSNISSE_URL ?? "").replace(/\/+$/, "");
  if (!base) {
    throw new CliError("No Worker URL given.", "Pass --url https://<worker>.workers.dev or set SLIPSNISSE_URL (http://127.0.0.1:8787 for `npm start`).", 2);
  }
  if (!/^https?:\/\//.test(base))
    throw new CliError(`The Worker URL "${base}" is not an http(s) URL.`, "Write it like https://slipsnisse.example.workers.dev.", 2);
  // An empty value counts as unset, as for SLIPSNISSE_URL.
  const given = (typeof flags.token === "string" && flags.token !== "" ? flags.token : undefined) ?? (env.SLIPSNISSE_ADMIN_TOKEN || undefined);
  const local = given === undefined ? localAdminToken(base, cwd) : undefined;
  const token = given ?? local?.token;

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
    /** @type {Record<string, unknown> | undefined} */
    let parsed;
    try {
      const value = JSON.parse(text);
      parsed = value !== null && typeof value === "object" && !Array.isArray(value) ? value : {};
    } catch {
      parsed = undefined;
    }
    // A refusal of the credentials is one whatever its body (older Workers sent an empty 401).
    if (response.status === 401 || response.status === 403)
      throw credentialsRefused(response.status, parsed ?? {}, token === undefined ? "none" : local ? "file" : "given", local?.file);
    if (parsed === undefined) {
      throw new CliError(
        `${method} ${url} answered HTTP ${response.status} with something that is not the admin API's JSON.`,
        "Check that --url points at a Slipsnisse Worker (its base URL, without /admin/api).",
      );
    }
    if (response.ok) return parsed;
    throw refusal(response.status, parsed);
  }

  return {
    base,
    /** @param {string} path */
    get: (path, timeoutMs = DEFAULT_TIMEOUT_MS) => call("GET", path, undefined, timeoutMs),
    /** @param {string} path @param {unknown} body @param {number} [timeoutMs] */
    put: (path, body, timeoutMs = DEFAULT_TIMEOUT_MS) => call("PUT", path, body, timeoutMs),
    /** @param {string} path @param {unknown} [body] @param {number} [timeoutMs] */
    post: (path, body, timeoutMs = DEFAULT_TIMEOUT_MS) => call("POST", path, body, timeoutMs),
    /** @param {string} path */
    delete: (path) => call("DELETE", path, undefined),
  };
}

/**
 * The Worker's own `{error, fix}` when it sent one: it knows whether it wanted a token, which
 * kinds it takes and, locally, where `npm start` put its token.
 * @param {number} status 401 or 403
 * @param {Record<string, unknown>} body
 * @param {"none" | "given" | "file"} sent which token went with the request
 * @param {string | undefined} file the token file read, when sent is "file"
 */
function credentialsRefused(status, body, sent, file) {
  const detail = typeof body.error === "string" ? `: ${body.error}` : "";
  const what =
    status === 403
      ? `The Worker refused this caller (403)${detail}`
      : sent === "none"
        ? `The Worker wants an admin token (401)${detail}`
        : `The Worker refused the admin token${sent === "file" ? ` from ${file}` : ""} (401)${detail}`;
  const fix =
    typeof body.fix === "string"
      ? body.fix
      : "Pass --token or set SLIPSNISSE_ADMIN_TOKEN to the Worker's ADMIN_TOKEN secret (`npx wrangler secret put ADMIN_TOKEN` sets it). For a local `npm start`, use the URL its banner prints: the CLI then reads the token by itself.";
  return new CliError(what, fix);
}

/**
 * @param {number} status
 * @param {Record<string, unknown>} body
 */
function refusal(status, body) {
  const error = typeof body.error === "string" ? body.error : `HTTP ${status}`;
  const fix = typeof body.fix === "string" ? body.fix : "";
  const problems = Array.isArray(body.problems) ? body.problems : [];
  if (problems.length > 0) {
    const lines = formatProblems(/** @type {import("./catalog-validator.mjs").CatalogProblem[]} */ (problems));
    return new CliError(`The Worker refused it (HTTP ${status}), ${problems.length} problem(s):\n${lines}`, fix || "Correct each listed path as its fix says.");
  }
  return new CliError(`The Worker refused it (HTTP ${status}): ${error}`, fix || "See the message above.");
}
