// @ts-check
import { adminClient } from "../admin-client.mjs";
import { usageError } from "../cli-error.mjs";
import { withProgress } from "../progress.mjs";

/**
 * `rollback <version> [--skill s]`: restores an earlier version of a skill (default: `default`)
 * as a new version, so the rollback itself is in the history and can be undone.
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
  const answer = await withProgress(io, `Restoring version ${version} of ${skill}`, () =>
    client.post(`/skills/${encodeURIComponent(skill)}/versions/${version}/restore`),
  );
  io.stdout.write(`skill ${skill}: version ${version} restored as version ${answer.version}\n`);
  return 0;
}
