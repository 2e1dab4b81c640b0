// @ts-check
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { CliError, usageError } from "./cli-error.mjs";
import { diff } from "./commands/diff.mjs";
import { evalCommand } from "./commands/eval.mjs";
import { members } from "./commands/members.mjs";
import { connections } from "./commands/connections.mjs";
import { pull } from "./commands/pull.mjs";
import { push } from "./commands/push.mjs";
import { rollback } from "./commands/rollback.mjs";
import { runs } from "./commands/runs.mjs";
import { serviceClients } from "./commands/service-clients.mjs";
import { tenant } from "./commands/tenant.mjs";
import { usage as usageCommand } from "./commands/usage.mjs";
import { validate } from "./commands/validate.mjs";
import { versions } from "./commands/versions.mjs";
import { whoami } from "./commands/whoami.mjs";

const usage = readFileSync(new URL("./usage.md", import.meta.url), "utf8");

/** @type {Record<string, (args: string[], flags: Record<string, unknown>, io: import("./io.mjs").CliIo) => Promise<number>>} */
export const COMMANDS = { validate, push, pull, diff, versions, rollback, whoami, tenant, runs, usage: usageCommand };

const OPTIONS = /** @type {const} */ ({
  url: { type: "string" },
  token: { type: "string" },
  skill: { type: "string" },
  note: { type: "string" },
  config: { type: "string" },
  "dry-run": { type: "boolean" },
  // tenant add: ids of resources that exist already
  "db-id": { type: "string" },
  "cache-kv-id": { type: "string" },
  "oauth-kv-id": { type: "string" },
  "exit-code": { type: "boolean" },
  // runs and usage
  expert: { type: "string" },
  user: { type: "string" },
  outcome: { type: "string" },
  from: { type: "string" },
  to: { type: "string" },
  limit: { type: "string" },
  cursor: { type: "string" },
  "group-by": { type: "string" },
  servers: { type: "boolean" },
  json: { type: "boolean" },
  // eval
  model: { type: "string", multiple: true },
  mode: { type: "string", multiple: true },
  eval: { type: "string", multiple: true },
  threshold: { type: "string" },
  "max-cost": { type: "string" },
  concurrency: { type: "string" },
  "require-evals": { type: "boolean" },
  // push and rollback
  prune: { type: "boolean" },
  yes: { type: "boolean" },
  "override-eval-gate": { type: "string" },
  help: { type: "boolean", short: "h" },
});

/**
 * Runs one CLI invocation and returns its exit code; errors are printed with their fix.
 * @param {string[]} argv arguments after `slipsnisse`
 * @param {import("./io.mjs").CliIo} io
 * @returns {Promise<number>}
 */
export async function main(argv, io) {
  try {
    let parsed;
    try {
      parsed = parseArgs({ args: valuesJoined(argv), options: OPTIONS, allowPositionals: true, strict: true });
    } catch (error) {
      throw usageError(error instanceof Error ? error.message : String(error));
    }
    const [name, ...args] = parsed.positionals;
    if (parsed.values.help || !name) {
      io.stdout.write(usage);
      return name || parsed.values.help ? 0 : 2;
    }
    const command = COMMANDS[name];
    if (!command) throw usageError(`Unknown command "${name}".`);
    return await command(args, parsed.values, io);
  } catch (error) {
    if (error instanceof CliError) {
      io.stderr.write(`error: ${error.message}\nfix: ${error.fix}\n`);
      return error.exitCode;
    }
    io.stderr.write(
      `error: unexpected failure: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\nfix: please report this with the command you ran.\n`,
    );
    return 1;
  }
}

/**
 * `--token <value>` as `--token=<value>` for every option that takes a value. parseArgs refuses a
 * value that begins with a dash as "ambiguous", and tokens are base64url: one in 64 that `npm
 * start` or `randomBytes` mints begins with "-". A following argument that is itself one of the
 * options stays an option (`--url --token x` still says the URL is missing).
 * @param {string[]} argv
 * @returns {string[]}
 */
function valuesJoined(argv) {
  /** @type {string[]} */
  const joined = [];
  for (let index = 0; index < argv.length; index += 1) {
    const arg = argv[index] ?? "";
    const next = argv[index + 1];
    const name = arg.startsWith("--") ? arg.slice(2) : undefined;
    const takesValue = name !== undefined && Object.hasOwn(OPTIONS, name) && OPTIONS[/** @type {keyof typeof OPTIONS} */ (name)].type === "string";
    if (takesValue && next?.startsWith("-") && !isOption(next)) {
      joined.push(`${arg}=${next}`);
      index += 1;
    } else joined.push(arg);
  }
  return joined;
}

/** @param {string} arg */
function isOption(arg) {
  if (arg === "--") return true;
  if (arg.startsWith("--")) return Object.hasOwn(OPTIONS, arg.slice(2).split("=")[0] ?? "");
  return arg === "-h";
}

// Evals of the catalog's experts, run on the Worker (src/admin/evals).
COMMANDS.eval = evalCommand;
// Team administration (members and their grants), beside the catalog commands in the table above.
COMMANDS.members = members;
COMMANDS.connections = connections;
COMMANDS["service-clients"] = serviceClients;
