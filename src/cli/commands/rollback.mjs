// @ts-check
import { adminClient } from "../admin-client.mjs";
import { diffCatalogs } from "../catalog-diff.mjs";
import { parseCatalog } from "../catalog-validator.mjs";
import { CliError, usageError } from "../cli-error.mjs";
import { confirm, interactive } from "../confirm.mjs";
import { withProgress } from "../progress.mjs";

/** A gated restore runs evals (full expert runs) before it answers. */
const EVAL_GATE_TIMEOUT_MS = 15 * 60_000;

/**
 * `rollback <version> [--skill s] [--dry-run] [--yes]`: restores an earlier version of a skill
 * (default: `default`) as a new version, so the rollback itself is in the history and can be
 * undone. --dry-run shows what it would change and restores nothing; on a terminal that
 * preview comes first and the rollback waits for a yes (--yes answers for it).
 * @param {string[]} args @param {Record<string, unknown>} flags @param {import("../io.mjs").CliIo} io
 */
export async function rollback(args, flags, io) {
  const [version] = args;
  if (!version || !/^[1-9]\d*$/.test(version)) {
    throw usageError(
      "rollback needs a version number: `npx slipsnisse rollback 3 --skill default`.",
      "List them with `npx slipsnisse versions --skill <skill>`.",
    );
  }
  const skill = typeof flags.skill === "string" ? flags.skill : "default";
  const client = adminClient(flags, io);
  const ask = interactive(io) && !flags.yes;
  if (flags["dry-run"] || ask) {
    const lines = await preview(client, io, skill, version);
    io.stdout.write(
      lines.length === 0
        ? `Restoring version ${version} of ${skill} changes nothing: it matches the live version.\n`
        : `Restoring version ${version} of ${skill} would change:\n${lines.join("\n")}\n`,
    );
    if (flags["dry-run"]) {
      io.stdout.write("Dry run: nothing was restored.\n");
      return 0;
    }
    if (!(await confirm(io, `Restore version ${version} of ${skill}?`))) {
      io.stdout.write("Nothing was restored.\n");
      return 1;
    }
  }
  const query = new URLSearchParams();
  if (typeof flags.note === "string") query.set("note", flags.note);
  // Skips the eval gate; the Worker logs it and keeps the reason in the version's note.
  if (typeof flags["override-eval-gate"] === "string") query.set("override_eval_gate", flags["override-eval-gate"]);
  const answer = await withProgress(io, `Restoring version ${version} of ${skill}`, () =>
    client.post(`/skills/${encodeURIComponent(skill)}/versions/${version}/restore${query.size > 0 ? `?${query}` : ""}`, undefined, EVAL_GATE_TIMEOUT_MS),
  );
  io.stdout.write(`skill ${skill}: version ${version} restored as version ${answer.version}\n`);
  return 0;
}

/**
 * The diff from the live skill to the version, as `diff` shows a push (catalog-diff.mjs); a
 * skill no longer served shows as added back.
 * @param {ReturnType<typeof adminClient>} client @param {import("../io.mjs").CliIo} io
 * @param {string} skill @param {string} version
 */
async function preview(client, io, skill, version) {
  const [catalog, target] = await withProgress(io, `Fetching the live catalog and version ${version} of ${skill}`, () =>
    Promise.all([client.get("/catalog"), client.get(`/skills/${encodeURIComponent(skill)}/versions/${version}`)]),
  );
  const live = /** @type {Record<string, unknown> | undefined} */ (catalog.skills)?.[skill];
  const both = parseCatalog({ skills: { target: target.config, ...(live === undefined ? {} : { live }) } });
  if (!both.ok) throw new CliError(`Skill ${skill} does not pass this CLI's checks.`, "Update the CLI (git pull) so it matches the deployed Worker.");
  const { live: before, target: after } = both.catalog.skills;
  return diffCatalogs({ skills: before ? { [skill]: before } : {} }, { skills: after ? { [skill]: after } : {} });
}
