// @ts-check
import { readFileSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { resolve } from "node:path";
import { CliError, usageError } from "../cli-error.mjs";
import { envBlock, hasEnv, topLevelName, topLevelVars } from "../tenant/env-block.mjs";
import { createResources, PLACEHOLDER_IDS, resourceCommands } from "../tenant/wrangler-resources.mjs";

/** Worker names are at most 63 characters; `<name>-` comes before the tenant. */
const TENANT_NAME = /^[a-z][a-z0-9-]{0,39}$/;
const nextSteps = readFileSync(new URL("../tenant/next-steps.md", import.meta.url), "utf8");

/**
 * `tenant add <name> [--dry-run] [--config wrangler.toml]`: creates the tenant's D1 database and
 * two KV namespaces with wrangler, writes its [env.<name>] block, prints what is left to do.
 * --dry-run prints the wrangler commands and writes placeholder ids (no network, no login).
 * @param {string[]} args @param {Record<string, unknown>} flags @param {import("../io.mjs").CliIo} io
 */
export async function tenant(args, flags, io) {
  const [sub, name] = args;
  if (sub !== "add") throw usageError(`Unknown tenant command "${sub ?? ""}".`, "Use `npx slipsnisse tenant add <name>`.");
  if (!name || !TENANT_NAME.test(name)) {
    throw usageError(`Tenant name "${name ?? ""}" is not allowed.`, "Use 1-40 of lowercase a-z, 0-9 and `-`, starting with a letter, e.g. `acme`.");
  }
  const configPath = resolve(io.cwd, typeof flags.config === "string" ? flags.config : "wrangler.toml");
  const toml = await readFile(configPath, "utf8").catch(() => {
    throw new CliError(`There is no ${configPath}.`, "Run this in the Slipsnisse project directory, or pass --config path/to/wrangler.toml.");
  });
  if (hasEnv(toml, name))
    throw new CliError(`${configPath} already has [env.${name}].`, `Pick another name, or remove that block first to recreate tenant "${name}".`);
  const base = topLevelName(toml);
  if (!base) throw new CliError(`${configPath} has no top-level \`name = "..."\`.`, "Add the Worker's name at the top of wrangler.toml.");
  const workerName = `${base}-${name}`;

  const dryRun = Boolean(flags["dry-run"]);
  if (dryRun) {
    io.stdout.write("Dry run: these commands would create the resources (they need `npx wrangler login`):\n");
    for (const command of resourceCommands(workerName)) io.stdout.write(`  npx wrangler ${command.args.join(" ")}\n`);
  }
  const ids = dryRun ? PLACEHOLDER_IDS : await createResources(io, workerName);
  const block = envBlock({ tenant: name, workerName, ids, vars: topLevelVars(toml), placeholder: dryRun });
  await writeFile(configPath, `${toml.replace(/\n*$/, "\n")}${block}`);
  io.stdout.write(
    `\n${nextSteps
      .replaceAll("{{tenant}}", name)
      .replaceAll("{{worker}}", workerName)
      .replaceAll("{{config}}", configPath)
      .replaceAll("{{placeholderNote}}", dryRun ? "\nIts ids are PLACEHOLDERS (--dry-run): create the resources before deploying." : "")}`,
  );
  return 0;
}
