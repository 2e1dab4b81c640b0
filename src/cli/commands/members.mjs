// @ts-check
import { adminClient } from "../admin-client.mjs";
import { usageError } from "../cli-error.mjs";
import { writeTable } from "../io.mjs";
import { withProgress } from "../progress.mjs";

/**
 * `members`: who signed in (GET /admin/api/members), and `members revoke <user>`: revoke every
 * OAuth grant of one member (POST /admin/api/members/<user>/revoke), so their tokens stop
 * working on their next request. <user> is a user id, login or email.
 * @param {string[]} args @param {Record<string, unknown>} flags @param {import("../io.mjs").CliIo} io
 */
export async function members(args, flags, io) {
  const client = adminClient(flags, io);
  const [sub, user, ...rest] = args;
  if (sub === undefined || sub === "list") {
    if (user !== undefined) throw usageError(`\`members list\` takes no argument (got "${user}").`);
    const body = await withProgress(io, `Listing members of ${client.base}`, () => client.get("/members"));
    const rows = /** @type {Array<Record<string, unknown> & { grants: unknown[] }>} */ (body.members ?? []);
    if (rows.length === 0) {
      io.stdout.write("No member has signed in yet.\n");
      return 0;
    }
    const table = [["user id", "login", "role", "first seen", "last seen", "grants"]];
    for (const row of rows)
      table.push([String(row.userId), String(row.login), String(row.role), String(row.firstSeenAt), String(row.lastSeenAt), String(row.grants.length)]);
    writeTable(io.stdout, table);
    return 0;
  }
  if (sub === "revoke") {
    if (user === undefined || rest.length > 0) throw usageError("Usage: npx slipsnisse members revoke <user id, login or email>.");
    const body = await withProgress(io, `Revoking the grants of ${user}`, () => client.post(`/members/${encodeURIComponent(user)}/revoke`));
    io.stdout.write(
      `Revoked ${body.revokedGrants} grant(s) of ${body.login ?? body.userId} (${body.userId}) and ended their dashboard sessions; their tokens and dashboard cookies are refused from their next request.\n`,
    );
    return 0;
  }
  throw usageError(`Unknown members command "${sub}".`, "Use `npx slipsnisse members` to list or `npx slipsnisse members revoke <user>`.");
}
