// @ts-check
import { adminClient } from "../admin-client.mjs";
import { usageError } from "../cli-error.mjs";
import { withProgress } from "../progress.mjs";

/**
 * `usage [--from t] [--to t] [--group-by skill,expert,user,day] [--skill s] [--expert e] [--user u]`:
 * runs, outcomes, tokens, tool calls, bytes, p50/p95 latency and cost per group.
 * `usage --servers [--skill s]`: each downstream server over the last hour and day.
 * @param {string[]} args @param {Record<string, unknown>} flags @param {import("../io.mjs").CliIo} io
 */
export async function usage(args, flags, io) {
  if (args.length > 0) throw usageError("`usage` takes no positional arguments; use --from, --to and --group-by.");
  const client = adminClient(flags, io);
  const query = new URLSearchParams();
  if (flags.servers) {
    if (typeof flags.skill === "string") query.set("skill", flags.skill);
    const answer = await withProgress(io, "Fetching server usage", () => client.get(`/servers/usage${query.size > 0 ? `?${query}` : ""}`));
    if (flags.json) return json(io, answer);
    const servers = /** @type {Array<Record<string, any>>} */ (answer.servers ?? []);
    if (servers.length === 0) io.stdout.write("No downstream calls in the last day.\n");
    for (const server of servers) {
      io.stdout.write(`${server.skill}/${server.server}\n`);
      for (const [label, window] of [
        ["last hour", server.lastHour],
        ["last day", server.lastDay],
      ]) {
        const last = window.lastError ? `  last error ${new Date(window.lastError.at).toISOString()}: ${window.lastError.message}` : "";
        io.stdout.write(
          `  ${label.padEnd(9)} ${window.calls} calls, ${window.errors} errors, p50 ${ms(window.latencyMs.p50)}, p95 ${ms(window.latencyMs.p95)}${last}\n`,
        );
      }
    }
    return 0;
  }
  for (const [flag, param] of [
    ["from", "from"],
    ["to", "to"],
    ["group-by", "group_by"],
    ["skill", "skill"],
    ["expert", "expert"],
    ["user", "user"],
  ]) {
    if (typeof flags[flag] === "string") query.set(param, /** @type {string} */ (flags[flag]));
  }
  const answer = await withProgress(io, "Adding up usage", () => client.get(`/usage${query.size > 0 ? `?${query}` : ""}`));
  if (flags.json) return json(io, answer);
  io.stdout.write(
    `usage ${new Date(Number(answer.from)).toISOString()} to ${new Date(Number(answer.to)).toISOString()}${answer.truncated ? " (truncated: narrow the range)" : ""}\n`,
  );
  const groups = /** @type {Array<Record<string, any>>} */ (answer.groups ?? []);
  if (groups.length === 0) io.stdout.write("No runs in this range.\n");
  for (const group of groups) {
    const key = [group.skill, group.expert, group.user ? (group.user.login ? `${group.user.login} (${group.user.id})` : group.user.id) : undefined, group.day]
      .filter((part) => part !== undefined)
      .join("  ");
    const outcomes = Object.entries(group.outcomes)
      .map(([outcome, count]) => `${outcome} ${count}`)
      .join(", ");
    const cost = group.cost === null ? "no prices" : `cost ${group.cost}${group.unpricedRuns > 0 ? ` (+${group.unpricedRuns} unpriced runs)` : ""}`;
    io.stdout.write(
      `${key}\n  ${group.runs} runs (${outcomes}); tokens ${group.inputTokens} in / ${group.outputTokens} out; ${group.toolCalls} tool calls; ` +
        `${group.downstreamBytes} bytes; p50 ${ms(group.latencyMs.p50)}, p95 ${ms(group.latencyMs.p95)}; ${cost}\n`,
    );
  }
  return 0;
}

/** @param {number | null} value */
function ms(value) {
  return value === null ? "-" : `${value} ms`;
}

/** @param {import("../io.mjs").CliIo} io @param {unknown} value */
function json(io, value) {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  return 0;
}
