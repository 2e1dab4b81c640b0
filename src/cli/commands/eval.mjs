// @ts-check
import { adminClient } from "../admin-client.mjs";
import { CliError, usageError } from "../cli-error.mjs";
import { withProgress } from "../progress.mjs";

/** One expert's evals may run for long: each is a full expert run, several per model. */
const EVAL_TIMEOUT_MS = 15 * 60_000;

/**
 * @typedef {{ type: string, reason: string, assertion: number | null }} Failure
 * @typedef {{ eval: string, runId: string | null, outcome: string, passed: boolean, failures: Failure[], costUsd: number | null, latencyMs: number, trace: { page: string, api: string } | null }} EvalResult
 * @typedef {{ model: string, passed: number, total: number, skipped: number, inputTokens: number, outputTokens: number, costUsd: number, unpriced: boolean, p50Ms: number | null, p95Ms: number | null, results: EvalResult[] }} ModelReport
 * @typedef {{ skill: string, expert: string, catalogVersion: number, spentUsd: number, maxCost: number, stopped: string | null, models: ModelReport[] }} ExpertReport
 */

/**
 * `eval --skill s [--expert e] [--model provider:model …] [--mode synthesize|code …] [--eval name …] [--threshold r]
 * [--max-cost usd] [--concurrency n]`: runs the experts' catalog evals on the Worker, through
 * the same runner a member's call takes, and prints per expert and model what passed, tokens,
 * cost and latency, each failure with its trace; with several models, a ranking and the cheapest
 * that passes every eval (or reaches --threshold). With --mode, each model runs in each mode
 * (the tool loop against code mode), ranked side by side. Exits 1 when no model reaches it.
 * @param {string[]} args @param {Record<string, unknown>} flags @param {import("../io.mjs").CliIo} io
 */
export async function evalCommand(args, flags, io) {
  if (args.length > 0) throw usageError("`eval` takes no positional arguments: `npx slipsnisse eval --skill s [--expert e] [--model provider:model]`.");
  const skill = typeof flags.skill === "string" ? flags.skill : undefined;
  if (!skill) throw usageError("eval needs --skill: `npx slipsnisse eval --skill docs`.");
  const threshold = parseThreshold(flags.threshold);
  /** @type {Record<string, unknown>} */
  const body = {};
  const models = /** @type {string[] | undefined} */ (flags.model);
  if (models && models.length > 0) body.models = models;
  const modes = /** @type {string[] | undefined} */ (flags.mode);
  if (modes && modes.length > 0) body.modes = modes;
  const evals = /** @type {string[] | undefined} */ (flags.eval);
  if (evals && evals.length > 0) body.evals = evals;
  if (typeof flags["max-cost"] === "string") body.max_cost = parseNumber("--max-cost", flags["max-cost"]);
  if (typeof flags.concurrency === "string") body.concurrency = parseNumber("--concurrency", flags.concurrency);

  const client = adminClient(flags, io);
  const live = await withProgress(io, `Fetching skill ${skill}`, () => client.get(`/skills/${encodeURIComponent(skill)}`));
  const config = /** @type {{ experts?: Array<{ name: string, evals?: unknown[] }> }} */ (live.config ?? {});
  const experts = (config.experts ?? []).filter((expert) =>
    typeof flags.expert === "string" ? expert.name === flags.expert : (expert.evals ?? []).length > 0,
  );
  if (typeof flags.expert === "string" && experts.length === 0) {
    throw new CliError(`Skill ${skill} has no expert "${flags.expert}".`, `Use one of: ${(config.experts ?? []).map((expert) => expert.name).join(", ")}.`);
  }
  if (experts.length === 0) {
    throw new CliError(`No expert of skill ${skill} has evals.`, "Add an `evals` list to an expert in the catalog (see docs/operating.md#evals) and push it.");
  }

  /** @type {ExpertReport[]} */
  const reports = [];
  let allReached = true;
  for (const expert of experts) {
    const path = `/skills/${encodeURIComponent(skill)}/experts/${encodeURIComponent(expert.name)}/evals/run`;
    const report = /** @type {ExpertReport} */ (
      /** @type {unknown} */ (await withProgress(io, `Running the evals of ${skill}/${expert.name}`, () => client.post(path, body, EVAL_TIMEOUT_MS)))
    );
    reports.push(report);
    if (!flags.json) {
      allReached = printReport(io, report, threshold) && allReached;
      io.stdout.write(`  history: ${client.base}/admin/catalog/${encodeURIComponent(skill)}/experts/${encodeURIComponent(expert.name)}/evals\n`);
    } else allReached = rank(report.models, threshold).best !== undefined && allReached;
  }
  if (flags.json) io.stdout.write(`${JSON.stringify(reports.length === 1 ? reports[0] : reports, null, 2)}\n`);
  return allReached ? 0 : 1;
}

/**
 * @param {import("../io.mjs").CliIo} io @param {ExpertReport} report @param {number} threshold
 * @returns {boolean} whether some model reached the threshold
 */
function printReport(io, report, threshold) {
  const out = (/** @type {string} */ line) => io.stdout.write(`${line}\n`);
  out(`${report.skill}/${report.expert} (catalog version ${report.catalogVersion})`);
  const width = Math.max(...report.models.map((model) => model.model.length));
  for (const model of report.models) {
    const skipped = model.skipped > 0 ? `, ${model.skipped} not run` : "";
    out(
      `  ${model.model.padEnd(width)}  ${model.passed}/${model.total} passed${skipped}  tokens ${model.inputTokens + model.outputTokens} (${model.inputTokens} in, ${model.outputTokens} out)  cost ${cost(model)}  p50 ${ms(model.p50Ms)}  p95 ${ms(model.p95Ms)}`,
    );
    for (const result of model.results) {
      for (const failure of result.failures) out(`    ✗ ${result.eval}: ${failure.type}: ${failure.reason}`);
      if (result.failures.length > 0 && result.trace) out(`      trace ${result.trace.page}`);
    }
  }
  if (report.stopped) out(`  stopped: ${report.stopped}`);
  const { ranked, best } = rank(report.models, threshold);
  const goal = threshold >= 1 ? "passes every eval" : `passes at least ${Math.round(threshold * 100)}% of the evals`;
  if (report.models.length > 1) {
    out("  ranking (pass rate, then cost, then p50 latency):");
    for (const [index, model] of ranked.entries()) out(`    ${index + 1}. ${model.model}  ${percent(model)}  cost ${cost(model)}  p50 ${ms(model.p50Ms)}`);
  }
  out(best ? `  cheapest that ${goal}: ${best.model} (${cost(best)})` : `  no model ${goal}`);
  return best !== undefined;
}

/**
 * Models by pass rate (highest first), then known cost (lowest first; an unpriced model's cost is
 * unknown, so it comes after priced ones), then p50 latency. The best is the cheapest that reaches
 * the threshold with every eval run (a model the budget cut short is not known to pass).
 * @param {ModelReport[]} models @param {number} threshold
 */
export function rank(models, threshold) {
  const rate = (/** @type {ModelReport} */ model) => (model.total === 0 ? 0 : model.passed / model.total);
  const costKey = (/** @type {ModelReport} */ model) => (model.unpriced ? Number.POSITIVE_INFINITY : model.costUsd);
  const ranked = [...models].sort(
    (a, b) => rate(b) - rate(a) || costKey(a) - costKey(b) || (a.p50Ms ?? Number.POSITIVE_INFINITY) - (b.p50Ms ?? Number.POSITIVE_INFINITY),
  );
  const qualifying = ranked.filter((model) => model.skipped === 0 && model.total > 0 && rate(model) >= threshold);
  const best = [...qualifying].sort((a, b) => costKey(a) - costKey(b))[0];
  return { ranked, best };
}

/** @param {unknown} value */
function parseThreshold(value) {
  if (value === undefined) return 1;
  const text = String(value).trim();
  const number = text.endsWith("%") ? Number(text.slice(0, -1)) / 100 : Number(text);
  if (!Number.isFinite(number) || number <= 0 || number > 1) {
    throw usageError(
      `--threshold "${text}" is not a pass rate.`,
      "Give a share of evals that must pass, from 0 to 1 or as a percentage: --threshold 0.9 or --threshold 90%.",
    );
  }
  return number;
}

/** @param {string} flag @param {string} value */
function parseNumber(flag, value) {
  const number = Number(value);
  if (value.trim() === "" || !Number.isFinite(number) || number < 0)
    throw usageError(`${flag} "${value}" is not a number.`, `Write ${flag} as a number, e.g. ${flag} 2.`);
  return number;
}

/** @param {ModelReport} model */
function cost(model) {
  if (model.unpriced) return model.costUsd > 0 ? `${model.costUsd.toFixed(6)}+ (partly unpriced)` : "unpriced";
  return model.costUsd.toFixed(6);
}

/** @param {ModelReport} model */
function percent(model) {
  return `${model.total === 0 ? 0 : Math.round((model.passed / model.total) * 100)}%`;
}

/** @param {number | null} value */
function ms(value) {
  return value === null ? "-" : `${value} ms`;
}
