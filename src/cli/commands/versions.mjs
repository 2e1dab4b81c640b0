// @ts-check
import { adminClient } from "../admin-client.mjs";
import { withProgress } from "../progress.mjs";

/**
 * `versions [--skill s]`: a skill's history (newest first), or every skill's.
 * @param {string[]} _args @param {Record<string, unknown>} flags @param {import("../io.mjs").CliIo} io
 */
export async function versions(_args, flags, io) {
  const client = adminClient(flags, io);
  const skills =
    typeof flags.skill === "string"
      ? [flags.skill]
      : /** @type {Array<{ name: string }>} */ ((await withProgress(io, `Listing skills at ${client.base}`, () => client.get("/skills"))).skills ?? []).map(
          (s) => s.name,
        );
  for (const skill of skills) {
    const answer = await withProgress(io, `Fetching the versions of ${skill}`, () => client.get(`/skills/${encodeURIComponent(skill)}/versions`));
    io.stdout.write(`skill ${skill}\n`);
    for (const v of /** @type {Array<Record<string, unknown>>} */ (answer.versions ?? [])) {
      const note = v.note ? `  ${v.note}` : "";
      io.stdout.write(`  ${v.current ? "*" : " "} v${String(v.version).padEnd(4)} ${v.time}  ${v.author}${note}\n`);
    }
  }
  if (skills.length === 0) io.stdout.write("No skills yet: `npx slipsnisse push catalog.json` creates them.\n");
  return 0;
}
