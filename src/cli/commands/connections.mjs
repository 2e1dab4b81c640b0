// @ts-check
import { adminClient } from "../admin-client.mjs";
import { usageError } from "../cli-error.mjs";
import { withProgress } from "../progress.mjs";

/**
 * `connections <user>`: the servers a member connected with their own account (GET
 * /admin/api/members/<user>/connections; never a token), `connections team` the team's, and
 * `connections remove <user|team> [server URL]`: end one connection or all of them (DELETE).
 * @param {string[]} args @param {Record<string, unknown>} flags @param {import("../io.mjs").CliIo} io
 */
export async function connections(args, flags, io) {
  const client = adminClient(flags, io);
  const [first, second, third, ...rest] = args;
  const pathOf = (/** @type {string} */ who) => (who === "team" ? "/connections/team" : `/members/${encodeURIComponent(who)}/connections`);
  if (first === "remove") {
    if (second === undefined || rest.length > 0) throw usageError("Usage: npx slipsnisse connections remove <user|team> [server URL].");
    const query = third === undefined ? "" : `?server=${encodeURIComponent(third)}`;
    const body = await withProgress(io, `Removing connections of ${second}`, () => client.delete(`${pathOf(second)}${query}`));
    io.stdout.write(`Removed ${body.removed} connection(s) of ${second}; the next call to such a server asks to connect again.\n`);
    return 0;
  }
  if (first === undefined || second !== undefined) throw usageError("Usage: npx slipsnisse connections <user id, login or email | team>.");
  const body = await withProgress(io, `Listing connections of ${first}`, () => client.get(pathOf(first)));
  const rows = /** @type {Array<Record<string, unknown>>} */ (body.connections ?? []);
  if (rows.length === 0) {
    io.stdout.write(`${first} has no connections.\n`);
    return 0;
  }
  for (const row of rows)
    io.stdout.write(
      `${row.server}  ${row.serverKey}  scope: ${row.scope ?? "-"}  connected ${row.connectedAt} by ${row.connectedBy}  expires ${row.expiresAt ?? "-"}\n`,
    );
  return 0;
}
