// @ts-check
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** Where `npm start` writes the admin token of the Worker it runs (git-ignored, mode 0600). */
export const LOCAL_ADMIN_TOKEN_FILE = ".wrangler/slipsnisse-admin.json";

const projectRoot = fileURLToPath(new URL("../..", import.meta.url));

/**
 * The token `npm start` wrote, when `base` is a loopback URL on the port that file names: the
 * local admin path needs no --token. Looked up in the working directory, then in the project the
 * CLI belongs to. Never used for any other host, so it cannot leak to a deployed Worker.
 * @param {string} base the Worker's base URL
 * @param {string} cwd
 * @returns {{ token: string, file: string } | undefined}
 */
export function localAdminToken(base, cwd) {
  const target = loopbackOrigin(base);
  if (target === undefined) return undefined;
  for (const dir of new Set([cwd, projectRoot])) {
    const file = join(dir, LOCAL_ADMIN_TOKEN_FILE);
    const entry = readEntry(file);
    if (entry && loopbackOrigin(entry.url)?.port === target.port) return { token: entry.token, file };
  }
  return undefined;
}

/** @param {string} file @returns {{ url: string, token: string } | undefined} */
function readEntry(file) {
  let value;
  try {
    value = JSON.parse(readFileSync(file, "utf8"));
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== "object") return undefined;
  const { url, token } = /** @type {Record<string, unknown>} */ (value);
  return typeof url === "string" && typeof token === "string" && token.length > 0 ? { url, token } : undefined;
}

/** @param {string} url @returns {{ port: string } | undefined} */
function loopbackOrigin(url) {
  let parsed;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  const host = parsed.hostname.toLowerCase();
  const loopback = host === "localhost" || host === "[::1]" || /^127(\.\d{1,3}){3}$/.test(host);
  if (!loopback || parsed.protocol !== "http:") return undefined;
  return { port: parsed.port || "80" };
}
