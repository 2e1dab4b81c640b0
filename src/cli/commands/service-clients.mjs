// @ts-check
import { adminClient } from "../admin-client.mjs";
import { usageError } from "../cli-error.mjs";
import { writeTable } from "../io.mjs";
import { withProgress } from "../progress.mjs";

/**
 * `service-clients`: automation's own OAuth clients (client credentials, SEP-1046), listed
 * (GET /admin/api/service-clients), created for named skills with a secret shown once
 * (POST /admin/api/service-clients), revoked at once (POST /admin/api/service-clients/<id>/revoke).
 * @param {string[]} args @param {Record<string, unknown>} flags @param {import("../io.mjs").CliIo} io
 */
export async function serviceClients(args, flags, io) {
  const client = adminClient(flags, io);
  const [sub, first, second, ...rest] = args;
  if (sub === undefined || sub === "list") {
    if (first !== undefined) throw usageError(`\`service-clients list\` takes no argument (got "${first}").`);
    const body = await withProgress(io, `Listing service clients of ${client.base}`, () => client.get("/service-clients"));
    const rows = /** @type {Array<Record<string, unknown> & { skills: string[] }>} */ (body.serviceClients ?? []);
    if (rows.length === 0) {
      io.stdout.write("No service client yet: create one with `npx slipsnisse service-clients create <name> <skill,...>`.\n");
      return 0;
    }
    const table = [["client id", "name", "skills", "created by", "created", "last token", "revoked"]];
    for (const row of rows)
      table.push([
        String(row.clientId),
        String(row.name),
        row.skills.join(","),
        String(row.createdBy),
        String(row.createdAt),
        String(row.lastTokenAt ?? "-"),
        String(row.revokedAt ?? "-"),
      ]);
    writeTable(io.stdout, table);
    return 0;
  }
  if (sub === "create") {
    if (first === undefined || second === undefined || rest.length > 0)
      throw usageError("Usage: npx slipsnisse service-clients create <name> <skill>[,<skill>...].");
    const skills = second
      .split(",")
      .map((skill) => skill.trim())
      .filter((skill) => skill !== "");
    const body = await withProgress(io, `Creating service client ${first}`, () => client.post("/service-clients", { name: first, skills }));
    if (flags.json) {
      io.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
      return 0;
    }
    io.stdout.write(
      [
        `Created service client ${body.name} for ${skills.join(", ")}.`,
        `  client id:      ${body.clientId}`,
        `  client secret:  ${body.clientSecret}`,
        `  token endpoint: ${body.tokenEndpoint} (grant_type=client_credentials, client_secret_basic or client_secret_post)`,
        "The secret is shown this once: store it where the automation reads it.",
        "",
      ].join("\n"),
    );
    return 0;
  }
  if (sub === "revoke") {
    if (first === undefined || second !== undefined) throw usageError("Usage: npx slipsnisse service-clients revoke <client id>.");
    await withProgress(io, `Revoking service client ${first}`, () => client.post(`/service-clients/${encodeURIComponent(first)}/revoke`));
    io.stdout.write(`Revoked ${first}: its tokens are refused from their next request and it gets no new one.\n`);
    return 0;
  }
  throw usageError(
    `Unknown service-clients command "${sub}".`,
    "Use `npx slipsnisse service-clients`, `service-clients create <name> <skill,...>` or `service-clients revoke <client id>`.",
  );
}
