import type { StepRecord, ToolCallRecord } from "../../experts/core/run-types";
import type { StoredRun } from "../../experts/records/run-log";
import { stripControlCharacters } from "../../untrusted/control-characters";

/**
 * A run's trace as Markdown for the orchestrator (or its user) reading `slipsnisse://runs/<id>`:
 * the same record /me/api and the admin API return, already redacted and cut to its bounds when
 * it was stored (trace/run-trace.ts), laid out to be read rather than parsed.
 *
 * Most of it is written by others: tool names the model invents, a downstream server's error
 * messages and results, the model's text and answer. A client renders this Markdown, so every
 * such piece is a code span or a fenced block (never bare), which CommonMark shows as text: no
 * image loads, no link, no HTML, no heading. Only our own words and numbers are bare.
 */
export function runTraceMarkdown(run: StoredRun, steps: readonly StepRecord[]): string {
  const lines = [`# Run ${run.id}`, "", `Expert ${code(run.expert)} of skill ${code(run.skill)}: **${run.outcome}**.`, ""];
  const facts: Array<[string, string | null]> = [
    ["Started", iso(run.startedAt)],
    ["Ended", run.endedAt === null ? null : iso(run.endedAt)],
    ["Model", code(run.model === null ? run.provider : `${run.provider} ${run.model}`)],
    ["Thread", run.threadId === null ? null : code(run.threadId)],
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
  if (run.error !== null) lines.push("", "## Error", "", ...fenced(run.error, "text"));
  if (run.args !== null) lines.push("", "## Arguments", "", ...fenced(run.args, "json"));
  // One note a line (a note's own line breaks would read as more notes), as text.
  if (run.notes.length > 0) lines.push("", "## Notes", "", ...fenced(run.notes.map((note) => note.replace(/\s*[\r\n]+\s*/g, " ")).join("\n"), "text"));
  if (run.unavailable.length > 0) {
    const entries = run.unavailable.map(
      ({ server, tool, reason }) => `${tool === undefined ? server : `${server}__${tool}`}: ${reason.replace(/\s*[\r\n]+\s*/g, " ")}`,
    );
    lines.push("", "## Unavailable", "", ...fenced(entries.join("\n"), "text"));
  }
  for (const step of steps) lines.push("", ...stepMarkdown(step));
  if (run.answer !== null) lines.push("", "## Answer", "", ...fenced(run.answer, "text"));
  return stripControlCharacters(`${lines.join("\n")}\n`);
}

function stepMarkdown(step: StepRecord): string[] {
  const model = step.model ? `, ${step.model.latencyMs} ms${step.model.retries > 0 ? `, ${step.model.retries} retries` : ""}` : "";
  const lines = [`## Step ${step.index + 1}`, "", `Finished: ${code(step.finishReason)}; tokens ${step.inputTokens} in, ${step.outputTokens} out${model}.`];
  if (step.text) lines.push("", ...fenced(step.text, "text"));
  for (const call of step.toolCalls) lines.push("", ...callMarkdown(call));
  return lines;
}

function callMarkdown(call: ToolCallRecord): string[] {
  const lines = [`### ${code(call.name)}: ${call.status}`, "", `${call.bytes} bytes, ${call.elapsedMs} ms.`];
  if (call.error !== undefined) lines.push("", "Error:", "", ...fenced(call.error, "text"));
  if (call.args !== undefined) lines.push("", "Arguments:", "", ...fenced(call.args, "json"));
  if (call.result !== undefined) lines.push("", "Result:", "", ...fenced(call.result, "text"));
  return lines;
}

function longestBacktickRun(text: string): number {
  return Math.max(0, ...Array.from(text.matchAll(/`+/g), (match) => match[0].length));
}

/** A fence longer than any backtick run inside, so a tool result cannot close it early (CommonMark §4.5). */
function fenced(text: string, language: string): string[] {
  const fence = "`".repeat(Math.max(3, longestBacktickRun(text) + 1));
  return [`${fence}${language}`, text, fence];
}

/**
 * Untrusted text inside a line (a heading, a sentence) as a code span: delimited by a backtick
 * run longer than any inside it, padded with spaces so a backtick at either end stays text
 * (CommonMark §6.1). Line breaks become spaces: a span may not end its line's block.
 */
function code(text: string): string {
  const flat = text.replace(/\s*[\r\n]+\s*/g, " ");
  const ticks = "`".repeat(longestBacktickRun(flat) + 1);
  return `${ticks} ${flat} ${ticks}`;
}

function iso(epochMs: number): string {
  return new Date(epochMs).toISOString();
}
