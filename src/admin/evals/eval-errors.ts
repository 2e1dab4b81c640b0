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
    this.fix = `Add an \`evals\` list to the expert in the catalog (see README, "Evals") and push it, e.g. [{"name": "basic", "arguments": {"query": "…"}, "assert": [{"type": "contains", "value": "…"}]}].`;
  }
}
