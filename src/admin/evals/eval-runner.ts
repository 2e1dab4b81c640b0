import { z } from "zod";
import { expertSchema, type ExpertConfig, type ExpertEval, type ProviderName, type SkillConfig } from "../../catalog/catalog-schema";
import { modelCost } from "../../catalog/model-pricing";
import type { CatalogProblem } from "../../catalog/catalog-problems";
import { checkEvalAssertions, type EvalFailure } from "../../experts/evals/eval-assertions";
import type { EvalRunOptions } from "../../experts/core/call-types";
import { EVAL_USER } from "../../experts/evals/eval-call";
import { judgeAnswer, type RubricVerdict } from "../../experts/evals/eval-judge";
import { modelIdOf } from "../../experts/models/model-defaults";
import { sessionStub } from "../../experts/session/session-name";
import { InvalidBodyError } from "../admin-errors";
import { latencySummary } from "../usage/percentiles";

const PROVIDERS = expertSchema.shape.provider.unwrap().options;

/** The body of POST …/evals/run; every field optional. */
export const evalRunBodySchema = z
  .object({
    models: z.array(z.string().min(3).max(200)).min(1).max(8).optional(),
    /** Each model runs in each of these modes (the tool loop against code mode); default: the expert's own. */
    modes: z.array(expertSchema.shape.mode.unwrap()).min(1).max(3).optional(),
    evals: z.array(z.string().min(1).max(64)).min(1).max(100).optional(),
    max_cost: z.number().min(0).max(1_000).optional(),
    concurrency: z.number().int().min(1).max(8).optional(),
  })
  .strict();
export type EvalRunBody = z.output<typeof evalRunBodySchema>;

export interface ModelChoice {
  provider: ProviderName;
  model: string;
  /** `provider:model`, as the command line writes it, with ` (mode)` when modes are compared. */
  ref: string;
  mode?: ExpertConfig["mode"];
}

export interface EvalResult {
  eval: string;
  runId: string | null;
  outcome: string;
  passed: boolean;
  failures: EvalFailure[];
  inputTokens: number;
  outputTokens: number;
  steps: number;
  /** Null when the model has no price in the skill's `pricing`. */
  costUsd: number | null;
  /** What grading its `rubric` assertions cost (the judge's tokens at the skill's prices; 0 when unpriced or none). */
  judgeCostUsd: number;
  latencyMs: number;
  /** The run's trace: the dashboard page and the admin API path. */
  trace: { page: string; api: string } | null;
}

export interface ModelReport {
  model: string;
  passed: number;
  total: number;
  /** Evals not run because the budget was reached. */
  skipped: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  /** True when some run's model had no price: costUsd then counts only priced runs. */
  unpriced: boolean;
  p50Ms: number | null;
  p95Ms: number | null;
  results: EvalResult[];
}

export interface ExpertEvalReport {
  skill: string;
  expert: string;
  catalogVersion: number;
  maxCost: number;
  concurrency: number;
  spentUsd: number;
  /** Why runs stopped early, when they did. */
  stopped: string | null;
  models: ModelReport[];
}

export interface EvalTarget {
  skill: string;
  version: number;
  config: SkillConfig;
  expert: ExpertConfig;
  origin: string;
  /** Run on `config` as a candidate not saved yet (version is then the one it would get). */
  candidate?: boolean;
}

interface EvalJob {
  choice: ModelChoice;
  evalCase: ExpertEval;
}

/**
 * Runs an expert's evals through the ExpertSession exactly as a member's call runs (same
 * runner, budgets, whitelist, servers, approvals policy), as the eval user, one session per
 * skill; then reads each run's record and checks the eval's assertions. `concurrency` runs at
 * once; no run starts once `maxCost` is spent (runs already going finish, so the total can pass
 * it by at most concurrency - 1 runs).
 */
export async function runExpertEvals(env: Env, target: EvalTarget, body: EvalRunBody): Promise<ExpertEvalReport> {
  const { skill, expert } = target;
  const cases = selectEvals(expert, body.evals);
  const models = (body.models ?? [`${expert.provider}:${modelIdOf(expert)}`]).map((ref, index) => parseModelRef(ref, index));
  const choices = body.modes ? withModes(models, body.modes, expert) : models;
  const maxCost = body.max_cost ?? expert.eval_settings?.max_cost ?? 1;
  const concurrency = body.concurrency ?? expert.eval_settings?.concurrency ?? 2;
  const queue: EvalJob[] = choices.flatMap((choice) => cases.map((evalCase) => ({ choice, evalCase })));
  const results = new Map<string, EvalResult[]>(choices.map((choice) => [choice.ref, []]));
  const skipped = new Map<string, number>(choices.map((choice) => [choice.ref, 0]));
  const stub = sessionStub(env, skill, EVAL_USER.userId);
  let spent = 0;
  let stopped: string | null = null;

  const worker = async (): Promise<void> => {
    for (let job = queue.shift(); job !== undefined; job = queue.shift()) {
      if (spent >= maxCost && maxCost >= 0) {
        stopped ??= `The eval budget of ${maxCost} was reached (spent ${spent.toFixed(6)}); the runs left were not started. Raise it with --max-cost (or the expert's eval_settings.max_cost) to run them.`;
        skipped.set(job.choice.ref, (skipped.get(job.choice.ref) ?? 0) + 1);
        continue;
      }
      const result = await runOne(env, stub, target, job);
      spent += (result.costUsd ?? 0) + result.judgeCostUsd;
      results.get(job.choice.ref)?.push(result);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, Math.max(queue.length, 1)) }, worker));

  return {
    skill,
    expert: expert.name,
    catalogVersion: target.version,
    maxCost,
    concurrency,
    spentUsd: spent,
    stopped,
    models: choices.map((choice) => modelReport(choice.ref, results.get(choice.ref) ?? [], skipped.get(choice.ref) ?? 0, cases)),
  };
}

/** Rubric assertions graded by the expert's judge model, when the run gave an answer to grade. */
async function judgeRubrics(env: Env, target: EvalTarget, evalCase: ExpertEval, outcome: string, text: string) {
  const verdicts = new Map<number, RubricVerdict>();
  const judge = target.expert.eval_settings?.judge;
  let judgeCostUsd = 0;
  if (!judge || outcome === "error" || outcome === "paused" || outcome === "cancelled") return { verdicts, judgeCostUsd };
  for (const [index, assertion] of evalCase.assert.entries()) {
    if (assertion.type !== "rubric") continue;
    const judged = await judgeAnswer(env, judge, { question: evalCase.arguments, answer: text, criteria: assertion.criteria });
    verdicts.set(index, judged.verdict);
    judgeCostUsd += modelCost(target.config.pricing, judge.provider, judge.model, judged.inputTokens, judged.outputTokens) ?? 0;
  }
  return { verdicts, judgeCostUsd };
}

async function runOne(env: Env, stub: ReturnType<typeof sessionStub>, target: EvalTarget, { choice, evalCase }: EvalJob): Promise<EvalResult> {
  const runId = crypto.randomUUID();
  const evaluation: EvalRunOptions = {
    name: evalCase.name,
    provider: choice.provider,
    model: choice.model,
    ...(choice.mode === undefined ? {} : { mode: choice.mode }),
    approve: evalCase.approve,
    ...(target.candidate ? { candidate: { version: target.version, config: target.config } } : {}),
  };
  const started = Date.now();
  const answer = await stub.callExpert({
    runId,
    skill: target.skill,
    expert: target.expert.name,
    args: evalCase.arguments,
    // The login names the eval, so the run index, usage and traces show each run as an eval.
    user: { ...EVAL_USER, login: `eval:${evalCase.name}` },
    evaluation,
  });
  const latencyMs = Date.now() - started;
  // A recorded run hands back its steps with the answer; one refused before it started (an
  // unknown expert) has none, and no record.
  const steps = answer.recordedSteps ?? [];
  const recorded = answer.recordedSteps !== undefined;
  const usage = answer.usage;
  const costUsd = modelCost(target.config.pricing, choice.provider, choice.model, usage.inputTokens, usage.outputTokens);
  const { verdicts, judgeCostUsd } = await judgeRubrics(env, target, evalCase, answer.outcome, answer.text);
  const failures = checkEvalAssertions(
    {
      outcome: answer.outcome,
      text: answer.text,
      ...(answer.structured ? { structured: answer.structured } : {}),
      steps,
      usage,
      costUsd,
      modelRef: choice.ref,
      verdicts,
    },
    evalCase.assert,
  );
  return {
    eval: evalCase.name,
    runId: recorded ? runId : null,
    outcome: answer.outcome,
    passed: failures.length === 0,
    failures,
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    steps: usage.steps,
    costUsd,
    judgeCostUsd,
    latencyMs,
    trace: recorded
      ? {
          page: `${target.origin}/admin/runs/${runId}`,
          api: `${target.origin}/admin/api/skills/${target.skill}/runs/${runId}?user=${encodeURIComponent(EVAL_USER.userId)}`,
        }
      : null,
  };
}

function modelReport(ref: string, results: EvalResult[], skipped: number, cases: readonly ExpertEval[]): ModelReport {
  // In catalog order, whatever order the concurrent runs ended in.
  const order = new Map(cases.map((evalCase, index) => [evalCase.name, index]));
  const sorted = [...results].sort((a, b) => (order.get(a.eval) ?? 0) - (order.get(b.eval) ?? 0));
  const latency = latencySummary(sorted.map((result) => result.latencyMs));
  return {
    model: ref,
    passed: sorted.filter((result) => result.passed).length,
    total: sorted.length + skipped,
    skipped,
    inputTokens: sum(sorted.map((result) => result.inputTokens)),
    outputTokens: sum(sorted.map((result) => result.outputTokens)),
    costUsd: sum(sorted.map((result) => result.costUsd ?? 0)),
    unpriced: sorted.some((result) => result.costUsd === null),
    p50Ms: latency.p50,
    p95Ms: latency.p95,
    results: sorted,
  };
}

function sum(values: readonly number[]): number {
  return values.reduce((total, value) => total + value, 0);
}

function selectEvals(expert: ExpertConfig, names: readonly string[] | undefined): ExpertEval[] {
  const all = expert.evals ?? [];
  if (names === undefined) return all;
  const problems: CatalogProblem[] = [];
  names.forEach((name, index) => {
    if (!all.some((evalCase) => evalCase.name === name)) {
      problems.push({
        path: `$.evals[${index}]`,
        message: `expert "${expert.name}" has no eval named "${name}"`,
        fix: `use one of: ${all.map((e) => e.name).join(", ")}`,
      });
    }
  });
  if (problems.length > 0) throw new InvalidBodyError(problems);
  return all.filter((evalCase) => names.includes(evalCase.name));
}

/** `provider:model`; the model id may itself hold colons (Ollama's `llama3.1:8b`). */
export function parseModelRef(ref: string, index: number): ModelChoice {
  const colon = ref.indexOf(":");
  const provider = PROVIDERS.find((name) => name === ref.slice(0, colon));
  const model = ref.slice(colon + 1);
  if (colon <= 0 || provider === undefined || model === "") {
    throw new InvalidBodyError([
      {
        path: `$.models[${index}]`,
        message: `"${ref.slice(0, 100)}" is not a model as provider:model`,
        fix: `write the provider (${PROVIDERS.join(", ")}), a colon and the model id, e.g. google:gemini-2.5-flash-lite`,
      },
    ]);
  }
  return { provider, model, ref: `${provider}:${model}` };
}

/**
 * Every model in every mode asked, so a report ranks the tool loop against code mode (and the
 * models within each). A mode the expert's config cannot run in is refused by its index.
 */
function withModes(models: readonly ModelChoice[], modes: ReadonlyArray<ExpertConfig["mode"]>, expert: ExpertConfig): ModelChoice[] {
  const problems: CatalogProblem[] = [];
  modes.forEach((mode, index) => {
    const clash =
      mode === "synthesize" ? [] : (["ask_back", "output_schema"] as const).filter((field) => expert[field] !== undefined && expert[field] !== false);
    if (clash.length > 0) {
      problems.push({
        path: `$.modes[${index}]`,
        message: `expert "${expert.name}" cannot run in mode "${mode}": it has ${clash.map((field) => `\`${field}\``).join(" and ")}`,
        fix: "leave that mode out, or compare on an expert without those fields",
      });
    }
  });
  if (problems.length > 0) throw new InvalidBodyError(problems);
  return models.flatMap((model) => modes.map((mode) => ({ ...model, mode, ref: `${model.ref} (${mode})` })));
}
