// @ts-check
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { CliError, usageError } from "../cli-error.mjs";
import { replaceFileAtomically } from "../tenant/config-write.mjs";
import { envBlock, hasEnv, topLevelName, topLevelVars } from "../tenant/env-block.mjs";
import { createResources, PLACEHOLDER_IDS, resourceCommands } from "../tenant/wrangler-resources.mjs";

/** Worker names are at most 63 characters; `<name>-` comes before the tenant. */
const TENANT_NAME = /^[a-z][a-z0-9-]{0,39}$/;
const nextSteps = readFileSync(new URL("../tenant/next-steps.md", import.meta.url), "utf8");

/** Ids of resources the user created beforehand (dashboard, another account): the flag and its format. */
const GIVEN_IDS = /** @type {const} */ ([
  { key: "databaseId", flag: "db-id", format: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, example: "the D1 database's UUID" },
  { key: "cacheId", flag: "cache-kv-id", format: /^[0-9a-f]{32}$/, example: "32 hex digits" },
  { key: "oauthKvId", flag: "oauth-kv-id", format: /^[0-9a-f]{32}$/, example: "32 hex digits" },
]);

/**
 * `tenant add <name> [--dry-run] [--config wrangler.toml] [--db-id … --cache-kv-id … --oauth-kv-id …]`:
 * creates the tenant's D1 database and two KV namespaces with wrangler (or takes the ids of ones
 * that exist), writes its [env.<name>] block, prints what is left to do, the deploy last but one.
 * --dry-run writes nothing: it prints the wrangler commands and the block it would write.
 * @param {string[]} args @param {Record<string, unknown>} flags @param {import("../io.mjs").CliIo} io
 */
export async function tenant(args, flags, io) {
  const [sub, name] = args;
  if (sub !== "add") throw usageError(`Unknown tenant command "${sub ?? ""}".`, "Use `npx slipsnisse tenant add <name>`.");
  if (!name || !TENANT_NAME.test(name)) {
    throw usageError(`Tenant name "${name ?? ""}" is not allowed.`, "Use 1-40 of lowercase a-z, 0-9 and `-`, starting with a letter, e.g. `acme`.");
  }
  const given = givenIds(flags);
  const configPath = resolve(io.cwd, typeof flags.config === "string" ? flags.config : "wrangler.toml");
  const toml = await readConfig(configPath);
  refuseExisting(toml, name, configPath);
  const base = topLevelName(toml);
  if (!base) throw new CliError(`${configPath} has no top-level \`name = "..."\`.`, "Add the Worker's name at the top of wrangler.toml.");
  const workerName = `${base}-${name}`;
  const steps = (/** @type {string} */ placeholderNote) =>
    `\n${nextSteps.replaceAll("{{tenant}}", name).replaceAll("{{worker}}", workerName).replaceAll("{{config}}", configPath).replaceAll("{{placeholderNote}}", placeholderNote)}`;

  if (flags["dry-run"]) {
    const block = envBlock({ tenant: name, workerName, ids: given ?? PLACEHOLDER_IDS, vars: topLevelVars(toml), placeholder: !given });
    io.stdout.write("Dry run: nothing is created and nothing is written.\n");
    if (!given) {
      io.stdout.write("These commands would create the resources (they need `npx wrangler login`):\n");
      for (const command of resourceCommands(workerName)) io.stdout.write(`  npx wrangler ${command.args.join(" ")}\n`);
    }
    io.stdout.write(`\nThis block would be appended to ${configPath}${given ? "" : ", with the new ids in place of the placeholders"}:\n${block}`);
    io.stdout.write(steps("\n(After the run without --dry-run.)"));
    return 0;
  }

  const ids = given ?? (await createResources(io, workerName));
  // Creating the resources takes seconds: write onto the file as it is now, not the copy read before.
  const current = await readConfig(configPath);
  refuseExisting(current, name, configPath);
  const block = envBlock({ tenant: name, workerName, ids, vars: topLevelVars(current), placeholder: false });
  await replaceFileAtomically(configPath, `${current.replace(/\n*$/, "\n")}${block}`);
  io.stdout.write(steps(""));
  return 0;
}

/** @param {string} configPath @returns {Promise<string>} */
function readConfig(configPath) {
  return readFile(configPath, "utf8").catch(() => {
    throw new CliError(`There is no ${configPath}.`, "Run this in the Slipsnisse project directory, or pass --config path/to/wrangler.toml.");
  });
}

/** @param {string} toml @param {string} name @param {string} configPath */
function refuseExisting(toml, name, configPath) {
  if (hasEnv(toml, name))
    throw new CliError(`${configPath} already has [env.${name}].`, `Pick another name, or remove that block first to recreate tenant "${name}".`);
}

/**
 * All three ids, or none (then wrangler creates the resources).
 * @param {Record<string, unknown>} flags
 * @returns {import("../tenant/env-block.mjs").TenantIds | undefined}
 */
function givenIds(flags) {
  const present = GIVEN_IDS.filter(({ flag }) => typeof flags[flag] === "string");
  if (present.length === 0) return undefined;
  if (present.length < GIVEN_IDS.length) {
    const missing = GIVEN_IDS.filter((id) => !present.includes(id)).map(({ flag }) => `--${flag}`);
    throw usageError(
      `Ids of existing resources need all three flags; ${missing.join(" and ")} missing.`,
      "Pass --db-id, --cache-kv-id and --oauth-kv-id together, or none to have wrangler create the resources.",
    );
  }
  /** @type {Record<string, string>} */
  const ids = {};
  for (const { key, flag, format, example } of GIVEN_IDS) {
    const value = String(flags[flag]);
    if (!format.test(value))
      throw usageError(
        `--${flag} "${value}" is not an id of that kind.`,
        `Pass ${example}, as \`npx wrangler d1 list\` / \`npx wrangler kv namespace list\` show it.`,
      );
    ids[key] = value;
  }
  return { databaseId: ids.databaseId ?? "", cacheId: ids.cacheId ?? "", oauthKvId: ids.oauthKvId ?? "" };
}
