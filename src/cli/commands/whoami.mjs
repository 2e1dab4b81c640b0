// @ts-check
import { adminClient } from "../admin-client.mjs";
import { withProgress } from "../progress.mjs";

/**
 * `whoami`: who the Worker takes the CLI's credentials to be (GET /admin/api/whoami). The userId
 * is the id the runs API's `?user=` takes.
 * @param {string[]} _args @param {Record<string, unknown>} flags @param {import("../io.mjs").CliIo} io
 */
export async function whoami(_args, flags, io) {
  const client = adminClient(flags, io);
  const me = await withProgress(io, `Asking ${client.base} who this is`, () => client.get("/whoami"));
  for (const key of ["userId", "login", "role", "idp"]) io.stdout.write(`${key}: ${me[key] ?? "-"}\n`);
  return 0;
}
