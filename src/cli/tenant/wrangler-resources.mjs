// @ts-check
import { spawn } from "node:child_process";
import { CliError } from "../cli-error.mjs";
import { withProgress } from "../progress.mjs";

/** Same as the project's scripts: no telemetry, no prompts. */
const QUIET = { WRANGLER_SEND_METRICS: "false", WRANGLER_SEND_ERROR_REPORTS: "false", WRANGLER_HIDE_BANNER: "true", CI: "true" };
const TIMEOUT_MS = 120_000;

/**
 * The wrangler commands that create a tenant's resources, and what to read from their output
 * (wrangler prints a config snippet with the new id for a TOML project).
 * @param {string} workerName
 */
export function resourceCommands(workerName) {
  return [
    { key: "databaseId", args: ["d1", "create", workerName], id: /database_id\s*=\s*"([0-9a-f-]{36})"|"database_id":\s*"([0-9a-f-]{36})"/ },
    { key: "cacheId", args: ["kv", "namespace", "create", `${workerName}-cache`], id: /\bid\s*=\s*"([0-9a-f]{32})"|"id":\s*"([0-9a-f]{32})"/ },
    { key: "oauthKvId", args: ["kv", "namespace", "create", `${workerName}-oauth`], id: /\bid\s*=\s*"([0-9a-f]{32})"|"id":\s*"([0-9a-f]{32})"/ },
  ];
}

export const PLACEHOLDER_IDS = {
  databaseId: "00000000-0000-4000-8000-000000000000",
  cacheId: "0000000000000000000000000000000a",
  oauthKvId: "0000000000000000000000000000000b",
};

/**
 * Runs each command with the project's wrangler (through npx, which puts the project's Node 24
 * first on PATH) and returns the new ids. Needs a Cloudflare login.
 * @param {import("../io.mjs").CliIo} io
 * @param {string} workerName
 * @returns {Promise<import("./env-block.mjs").TenantIds>}
 */
export async function createResources(io, workerName) {
  /** @type {Record<string, string>} */
  const ids = {};
  for (const command of resourceCommands(workerName)) {
    const output = await withProgress(io, `npx wrangler ${command.args.join(" ")}`, () => runWrangler(io, command.args));
    const match = command.id.exec(output);
    const id = match?.[1] ?? match?.[2];
    if (!id)
      throw new CliError(
        `wrangler ${command.args.join(" ")} printed no id I could read:\n${output.slice(-1500)}`,
        "Create it by hand and put its id into wrangler.toml.",
      );
    ids[command.key] = id;
  }
  return { databaseId: ids.databaseId ?? "", cacheId: ids.cacheId ?? "", oauthKvId: ids.oauthKvId ?? "" };
}

/** @param {import("../io.mjs").CliIo} io @param {string[]} args @returns {Promise<string>} */
function runWrangler(io, args) {
  return new Promise((resolve, reject) => {
    const child = spawn("npx", ["--no-install", "wrangler", ...args], { cwd: io.cwd, env: { ...process.env, ...QUIET }, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    const timer = setTimeout(() => child.kill("SIGTERM"), TIMEOUT_MS);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(new CliError(`Could not run wrangler (${error.message}).`, "Run `npm ci` in the project first; wrangler comes with it."));
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      if (code === 0) return resolve(output);
      const login = /not logged in|authenticat|CLOUDFLARE_API_TOKEN|login/i.test(output);
      reject(
        new CliError(
          `wrangler ${args.join(" ")} failed (exit ${code ?? "killed"}):\n${output.trim().slice(-1500)}`,
          login
            ? "Log in with `npx wrangler login` (or set CLOUDFLARE_API_TOKEN), then run the command again."
            : "Fix what wrangler says above, then run the command again; nothing was written to wrangler.toml.",
        ),
      );
    });
  });
}
