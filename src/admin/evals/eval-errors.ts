import type { CatalogProblem } from "../../catalog/catalog-problems";
import { AdminApiError } from "../admin-errors";

/** An eval command on an expert whose catalog entry has no `evals`. */
export class NoEvalsError extends AdminApiError {
  readonly kind = "no-evals";
  readonly status = 409;
  readonly fix: string;
  constructor(
    readonly skill: string,
    readonly expert: string,
  ) {
    super(`Expert "${expert}" of skill "${skill}" has no evals.`);
    this.fix = `Add an \`evals\` list to the expert in the catalog (see docs/operating.md#evals) and push it, e.g. [{"name": "basic", "arguments": {"query": "…"}, "assert": [{"type": "contains", "value": "…"}]}].`;
  }
}

/** A write gated on evals (`?require_evals=1` or `eval_settings.gate`) whose changed experts fail them. */
export class EvalGateFailedError extends AdminApiError {
  readonly kind = "eval-gate-failed";
  readonly status = 409;
  readonly fix = "Nothing was saved. Make the failing evals pass (or correct them), then push again.";
  constructor(
    readonly skill: string,
    override readonly problems: readonly CatalogProblem[],
  ) {
    super(`Skill "${skill}" was not saved: ${problems.length} eval problem(s) in its changed experts.`);
  }
}
