// @ts-check
import { adminClient } from "../admin-client.mjs";
import { usageError } from "../cli-error.mjs";
import { withProgress } from "../progress.mjs";

/** Query parameters of GET /admin/api/runs that the CLI passes through from flags of the same name. */
const FILTERS = ["skill", "expert", "user", "outcome", "from", "to", "limit", "cursor"];

/**
 * `runs [--skill s] [--expert e] [--user u] [--outcome o] [--from t] [--to t] [--limit n] [--cursor c]`:
 * the tenant's runs across users, newest first. `runs <run id>`: one run's full trace.
 * @param {string[]} args @param {Record<string, unknown>} flags @param {import("../io.mjs").CliIo} io
 */
export async function runs(args, flags, io) {
  if (args.length > 1) throw usageError("`runs` takes at most one run id.");
  const client = adminClient(flags, io);
  const [runId] = args;
  if (runId !== undefined) {
    const trace = await withProgress(io, `Fetching run ${runId}`, () => client.get(`/runs/${encodeURIComponent(runId)}`));
    io.stdout.write(flags.json ? `${JSON.stringify(trace, null, 2)}\n` : formatTrace(trace));
    return 0;
  }
  const query = new URLSearchParams();
  for (const name of FILTERS) if (typeof flags[name] === "string") query.set(name, /** @type {string} */ (flags[name]));
  const page = await withProgress(io, `Listing runs at ${client.base}`, () => client.get(`/runs${query.size > 0 ? `?${query}` : ""}`));
  if (flags.json) {
    io.stdout.write(`${JSON.stringify(page, null, 2)}\n`);
    return 0;
  }
  const list = /** @type {Array<Record<string, any>>} */ (page.runs ?? []);
  if (list.length === 0) io.stdout.write("No runs match.\n");
  for (const run of list) {
    const user = run.user?.login ? `${run.user.login} (${run.user.id})` : run.user?.id;
    // The dashboard's mark for calls the model made to tools this expert does not have (run-pages.ts runOutcome).
    const refused = run.refusedCalls > 0 ? ` ⚠ ${run.refusedCalls} refused` : "";
    io.stdout.write(
      `${new Date(run.startedAt).toISOString()}  ${`${run.outcome}${refused}`.padEnd(16)} ${run.skill}/${run.expert}  ${user}  ${run.elapsedMs} ms  ` +
        `tokens ${run.inputTokens}/${run.outputTokens}  tools ${run.toolCalls}${run.cost === null ? "" : `  cost ${run.cost}`}  ${run.id}\n`,
    );
  }
  if (typeof page.next_cursor === "string") io.stdout.write(`more: add --cursor ${page.next_cursor}\n`);
  return 0;
}

/** @param {Record<string, any>} trace */
function formatTrace(trace) {
  const { summary, run, steps } = trace;
  const lines = [
    `run ${summary.id}  ${summary.outcome}  ${summary.skill}/${summary.expert}  trace ${summary.traceId}`,
    `user ${summary.user?.login ?? ""} (${summary.user?.id})  catalog v${summary.catalogVersion}  ${summary.provider}/${summary.model}`,
    `started ${new Date(summary.startedAt).toISOString()}  ${summary.elapsedMs} ms  tokens ${summary.inputTokens}/${summary.outputTokens}`,
  ];
  if (run?.args) lines.push(`arguments ${run.args}`);
  for (const step of /** @type {Array<Record<string, any>>} */ (steps ?? [])) {
    const model = step.model
      ? `${step.model.provider}/${step.model.model} ${step.model.latencyMs} ms${step.model.retries ? `, ${step.model.retries} retries` : ""}`
      : "";
    // Numbered from 1, as the dashboard's trace numbers them (the API's index starts at 0).
    lines.push(`step ${step.index + 1}  ${step.finishReason}  tokens ${step.inputTokens}/${step.outputTokens}  ${model}`);
    for (const call of /** @type {Array<Record<string, any>>} */ (step.toolCalls ?? [])) {
      lines.push(`  ${call.status.padEnd(9)} ${call.name} ${call.args ?? ""}  ${call.elapsedMs} ms  ${call.bytes} bytes${call.error ? `  ${call.error}` : ""}`);
      if (call.result) lines.push(`    → ${String(call.result).split("\n")[0]}`);
    }
  }
  for (const note of /** @type {string[]} */ (run?.notes ?? [])) lines.push(`note: ${note}`);
  if (run?.answer) lines.push(`answer: ${run.answer}`);
  return `${lines.join("\n")}\n`;
}
