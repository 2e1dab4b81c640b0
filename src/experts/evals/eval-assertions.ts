import { Validator, type Schema } from "@cfworker/json-schema";
import type { EvalAssertion } from "../../catalog/catalog-schema";
import type { JsonObject, RecordedOutcome, RunUsage, StepRecord } from "../core/run-types";
import { globToRegExp } from "../tools/tool-names";
import type { RubricVerdict } from "./eval-judge";

/** What an eval's assertions are checked against: the call's answer and its run record. */
export interface EvalRunView {
  outcome: RecordedOutcome | "running";
  /** The answer as the orchestrator got it. */
  text: string;
  structured?: JsonObject;
  /** The recorded steps, with every tool call the model made (refused and declined ones too). */
  steps: readonly StepRecord[];
  usage: RunUsage | null;
  /** At the skill's `pricing`; null when the model has no price there. */
  costUsd: number | null;
  /** `provider:model`, to name an unpriced model. */
  modelRef: string;
  /** The judge's verdict on each `rubric` assertion, by its index in `assert`. */
  verdicts?: ReadonlyMap<number, RubricVerdict>;
}

export interface EvalFailure {
  /** Index in the eval's `assert`, or null for the run's own failure (an error, a pause). */
  assertion: number | null;
  type: EvalAssertion["type"] | "outcome";
  reason: string;
}

/** Outcomes that are no answer at all: every assertion about an answer would be moot. */
const FAILED_OUTCOMES: ReadonlySet<string> = new Set(["error", "cancelled", "paused", "running"]);

/** Every failed assertion with its reason; empty when the run passes. */
export function checkEvalAssertions(run: EvalRunView, assertions: readonly EvalAssertion[]): EvalFailure[] {
  const failures: EvalFailure[] = [];
  if (FAILED_OUTCOMES.has(run.outcome)) {
    failures.push({ assertion: null, type: "outcome", reason: `the run ended \`${run.outcome}\`: ${run.text.slice(0, 300)}` });
  }
  assertions.forEach((assertion, index) => {
    const reason = assertion.type === "rubric" ? rubricFailure(run.verdicts?.get(index), assertion.threshold) : failureOf(run, assertion);
    if (reason !== null) failures.push({ assertion: index, type: assertion.type, reason });
  });
  return failures;
}

function rubricFailure(verdict: RubricVerdict | undefined, threshold: number): string | null {
  if (verdict === undefined) return "the answer was not graded (the run gave no answer to grade)";
  if ("error" in verdict) return verdict.error;
  return verdict.score >= threshold ? null : `the judge scored ${verdict.score} (below ${threshold}): ${verdict.reason}`;
}

function failureOf(run: EvalRunView, assertion: Exclude<EvalAssertion, { type: "rubric" }>): string | null {
  switch (assertion.type) {
    case "contains": {
      const found = assertion.case_sensitive ? run.text.includes(assertion.value) : run.text.toLowerCase().includes(assertion.value.toLowerCase());
      return found ? null : `the answer does not contain ${JSON.stringify(assertion.value)}${assertion.case_sensitive ? " (case-sensitive)" : ""}`;
    }
    case "matches":
      return new RegExp(assertion.pattern, assertion.flags).test(run.text) ? null : `the answer does not match /${assertion.pattern}/${assertion.flags}`;
    case "json_schema":
      return schemaFailure(run, assertion.schema);
    case "calls_tool": {
      const ran = toolCalls(run).filter((call) => globToRegExp(assertion.tool).test(call.name) && RAN.has(call.status));
      if (ran.length > 0) return null;
      const tried = toolCalls(run).filter((call) => globToRegExp(assertion.tool).test(call.name));
      return tried.length > 0
        ? `the run tried \`${assertion.tool}\` but it did not run (${tried.map((call) => call.status).join(", ")})`
        : `the run never called a tool matching \`${assertion.tool}\` (called: ${calledNames(run)})`;
    }
    case "not_calls_tool": {
      const tried = toolCalls(run).filter((call) => globToRegExp(assertion.tool).test(call.name));
      return tried.length === 0
        ? null
        : `the run called \`${tried[0]?.name}\` (${tried.map((call) => call.status).join(", ")}), which matches the forbidden \`${assertion.tool}\``;
    }
    case "max_steps": {
      const steps = run.usage?.steps ?? run.steps.length;
      return steps <= assertion.value ? null : `the run took ${steps} steps, more than ${assertion.value}`;
    }
    case "max_tokens": {
      const tokens = (run.usage?.inputTokens ?? 0) + (run.usage?.outputTokens ?? 0);
      return tokens <= assertion.value ? null : `the run used ${tokens} tokens, more than ${assertion.value}`;
    }
    case "max_cost":
      if (run.costUsd === null) return `the cost is unknown: \`${run.modelRef}\` has no price in the skill's \`pricing\``;
      return run.costUsd <= assertion.value ? null : `the run cost ${run.costUsd.toFixed(6)}, more than ${assertion.value}`;
  }
}

/** A call that reached the server and ran (even if the server answered with an error). */
const RAN: ReadonlySet<string> = new Set(["ok", "truncated", "error"]);

function toolCalls(run: EvalRunView) {
  return run.steps.flatMap((step) => step.toolCalls);
}

function calledNames(run: EvalRunView): string {
  const names = [...new Set(toolCalls(run).map((call) => call.name))];
  return names.length === 0 ? "none" : names.join(", ");
}

function schemaFailure(run: EvalRunView, schema: Record<string, unknown>): string | null {
  let value: unknown = run.structured;
  if (value === undefined) {
    try {
      value = JSON.parse(run.text);
    } catch {
      return "the answer is not JSON (and the expert has no structured answer)";
    }
  }
  const result = new Validator(structuredClone(schema) as Schema, "2020-12").validate(value);
  if (result.valid) return null;
  const reasons = result.errors
    .filter((error) => error.keyword !== "properties")
    .slice(0, 3)
    .map((error) => `${error.instanceLocation.replace(/^#/, "") || "/"}: ${error.error}`);
  return `the answer does not validate against the schema: ${reasons.join("; ")}`;
}
