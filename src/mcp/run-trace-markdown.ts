import type { StepRecord, ToolCallRecord } from "../experts/run/expert-types";
import type { StoredRun } from "../experts/session/run-log";

/**
 * A run's trace as Markdown for the orchestrator (or its user) reading `slipsnisse://runs/<id>`:
 * the same record /me/api and the admin API return, already redacted and cut to its bounds when
 * it was stored (trace/run-trace.ts), laid out to be read rather than parsed.
 */
export function runTraceMarkdown(run: StoredRun, steps: readonly StepRecord[]): string {
  const lines = [`# Run ${run.id}`, "", `Expert \`${run.expert}\` of skill \`${run.skill}\`: **${run.outcome}**.`, ""];
  const facts: Array<[string, string | null]> = [
    ["Started", iso(run.startedAt)],
    ["Ended", run.endedAt === null ? null : iso(run.endedAt)],
    ["Model", run.model === null ? run.provider : `${run.provider} ${run.model}`],
    ["Thread", run.threadId],
    ["Catalog version", run.catalogVersion === null ? null : String(run.catalogVersion)],
    ["Trace id", run.traceId],
  ];
  if (run.usage) {
    const u = run.usage;
    facts.push(
      ["Steps", String(u.steps)],
      ["Tokens", `${u.inputTokens} in, ${u.outputTokens} out`],
      ["Tool calls", `${u.toolCalls} (${u.refusedToolCalls} refused)`],
      ["Downstream bytes read", String(u.downstreamBytesRead)],
      ["Elapsed", `${u.elapsedMs} ms`],
      ["Model retries", String(u.retries)],
      ["Budget exhausted", u.budgetExhausted],
    );
  }
  for (const [name, value] of facts) if (value !== null) lines.push(`- ${name}: ${value}`);
  if (run.error !== null) lines.push("", "## Error", "", run.error);
  if (run.args !== null) lines.push("", "## Arguments", "", ...fenced(run.args, "json"));
  if (run.notes.length > 0) lines.push("", "## Notes", "", ...run.notes.map((note) => `- ${note}`));
  for (const step of steps) lines.push("", ...stepMarkdown(step));
  if (run.answer !== null) lines.push("", "## Answer", "", ...fenced(run.answer, ""));
  return `${lines.join("\n")}\n`;
}

function stepMarkdown(step: StepRecord): string[] {
  const model = step.model ? `, ${step.model.latencyMs} ms${step.model.retries > 0 ? `, ${step.model.retries} retries` : ""}` : "";
  const lines = [`## Step ${step.index + 1}`, "", `Finished: ${step.finishReason}; tokens ${step.inputTokens} in, ${step.outputTokens} out${model}.`];
  if (step.text) lines.push("", ...fenced(step.text, ""));
  for (const call of step.toolCalls) lines.push("", ...callMarkdown(call));
  return lines;
}

function callMarkdown(call: ToolCallRecord): string[] {
  const lines = [`### \`${call.name}\`: ${call.status}`, "", `${call.bytes} bytes, ${call.elapsedMs} ms.`];
  if (call.error !== undefined) lines.push("", `Error: ${call.error}`);
  if (call.args !== undefined) lines.push("", "Arguments:", "", ...fenced(call.args, "json"));
  if (call.result !== undefined) lines.push("", "Result:", "", ...fenced(call.result, ""));
  return lines;
}

/** A fence longer than any backtick run inside, so a tool result cannot close it early (CommonMark §4.5). */
function fenced(text: string, language: string): string[] {
  const longest = Math.max(0, ...Array.from(text.matchAll(/`+/g), (match) => match[0].length));
  const fence = "`".repeat(Math.max(3, longest + 1));
  return [`${fence}${language}`, text, fence];
}

function iso(epochMs: number): string {
  return new Date(epochMs).toISOString();
}
