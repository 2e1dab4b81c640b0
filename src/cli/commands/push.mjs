// @ts-check
import { adminClient } from "../admin-client.mjs";
import { readCatalogFile } from "../catalog-file.mjs";
import { formatProblems, parseCatalog } from "../catalog-validator.mjs";
import { CliError, usageError } from "../cli-error.mjs";
import { confirm, interactive } from "../confirm.mjs";
import { withProgress } from "../progress.mjs";

/** A gated push runs evals (full expert runs) before it answers. */
const EVAL_GATE_TIMEOUT_MS = 15 * 60_000;

/**
 * `push <file> [--skill s] [--prune [--yes]]`: makes the file's skills the live ones, or with
 * --skill replaces just that skill. Live skills the file lacks are kept unless --prune says to
 * stop serving them; they are listed before anything is sent, and on a terminal --prune asks
 * first (--yes answers for it). Checked offline first, so a broken file never reaches the Worker.
 * @param {string[]} args @param {Record<string, unknown>} flags @param {import("../io.mjs").CliIo} io
 */
export async function push(args, flags, io) {
  const [file] = args;
  if (!file) throw usageError("push needs a file: `npx slipsnisse push catalog.json`.");
  const document = await readCatalogFile(io.cwd, file);
  const checked = parseCatalog(document);
  if (!checked.ok) {
    throw new CliError(
      `${file} has ${checked.problems.length} problem(s); nothing was pushed:\n${formatProblems(checked.problems)}`,
      "Correct each listed path as its fix says, then push again.",
    );
  }
  const client = adminClient(flags, io);
  const query = new URLSearchParams();
  if (typeof flags.note === "string") query.set("note", flags.note);
  // The Worker runs the changed experts' evals on the new catalog first and saves nothing if one fails.
  if (flags["require-evals"]) query.set("require_evals", "1");
  // Skips the eval gate; the Worker logs it and keeps the reason in the version's note.
  if (typeof flags["override-eval-gate"] === "string") query.set("override_eval_gate", flags["override-eval-gate"]);
  const search = () => (query.size > 0 ? `?${query}` : "");
  const timeoutMs = flags["require-evals"] ? EVAL_GATE_TIMEOUT_MS : undefined;
  const skill = flags.skill;
  if (typeof skill === "string") {
    const config = checked.catalog.skills[skill];
    if (!config) throw new CliError(`${file} has no skill "${skill}".`, `Use one of: ${Object.keys(checked.catalog.skills).join(", ")}.`);
    const answer = await withProgress(io, `Pushing skill ${skill} to ${client.base}`, () =>
      client.put(`/skills/${encodeURIComponent(skill)}${search()}`, config, timeoutMs),
    );
    io.stdout.write(`${describe({ skill, ...answer })}\n`);
    return 0;
  }
  const prune = flags.prune === true;
  const listed = await withProgress(io, `Fetching the live skills from ${client.base}`, () => client.get("/skills"));
  const missing = /** @type {Array<{ name: string }>} */ (listed.skills ?? [])
    .map(({ name }) => name)
    .filter((name) => !Object.hasOwn(checked.catalog.skills, name));
  if (prune && missing.length > 0) {
    io.stdout.write(`${missing.length} live skill(s) not in ${file} will stop being served (their history stays): ${missing.join(", ")}\n`);
    if (interactive(io) && !flags.yes && !(await confirm(io, `Remove ${missing.join(", ")}?`))) {
      io.stdout.write("Nothing was pushed.\n");
      return 1;
    }
  }
  if (!prune) query.set("prune", "false");
  const answer = await withProgress(io, `Pushing ${file} to ${client.base}`, () => client.put(`/catalog${search()}`, document, timeoutMs));
  for (const change of /** @type {Array<Record<string, unknown>>} */ (answer.skills ?? [])) io.stdout.write(`${describe(change)}\n`);
  const removed = /** @type {string[]} */ (answer.removed ?? []);
  for (const skill of removed) {
    io.stdout.write(`skill ${skill}: removed (not in ${file}); bring it back with \`npx slipsnisse versions --skill ${skill}\` and \`rollback\`\n`);
  }
  if (!prune) {
    for (const skill of missing.filter((name) => !removed.includes(name)))
      io.stdout.write(`skill ${skill}: kept (not in ${file}); to stop serving it, push again with --prune\n`);
  }
  return 0;
}

/** @param {Record<string, unknown>} change */
function describe(change) {
  return change.changed ? `skill ${change.skill}: saved as version ${change.version}` : `skill ${change.skill}: unchanged (version ${change.version})`;
}
