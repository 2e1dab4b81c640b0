import { asSchema, dynamicTool, jsonSchema, type Tool, type ToolSet } from "ai";
import type { RunBudget } from "../core/run-budget";
import type { SandboxLoader } from "../core/run-types";
import type { RunRecorder } from "../core/run-recorder";
import { truncateUtf8 } from "../core/result-truncation";
import { rawPreview, TRACE_BOUNDS } from "../core/trace-excerpt";
import { runScript, type ScriptOutcome } from "../sandbox/code-sandbox";
import { toolDeclarations, type DeclaredTool } from "../sandbox/tool-declarations";
import type { ExpertToolset } from "../tools/expert-toolset";

export const RUN_SCRIPT = "run_script";
/** CPU one script may use, in production (workerd's local runtime does not enforce it). */
export const SCRIPT_CPU_MS = 2_000;
const MAX_LOG_BYTES = 4_096;

/** The declarations of the expert's whitelisted tools, for the prompt. */
export async function declarationsOf(tools: ExpertToolset): Promise<string> {
  const declared: DeclaredTool[] = [];
  for (const name of tools.names) {
    const tool = tools.tools[name];
    if (!tool) continue;
    const description = typeof tool.description === "string" ? { description: tool.description } : {};
    declared.push({ name, ...description, inputSchema: await asSchema(tool.inputSchema).jsonSchema });
  }
  return toolDeclarations(declared);
}

export interface ScriptToolContext {
  loader: SandboxLoader;
  tools: ExpertToolset;
  budget: RunBudget;
  recorder: RunRecorder;
  signal: AbortSignal;
  /** The calls each script made, by the script's call id, so its step's record lists them after it. */
  innerCalls: Map<string, string[]>;
}

/**
 * The one tool a code-mode model has: `run_script({ code })`. Each call runs the code in a fresh
 * sandbox whose tool calls go through the expert's toolset exactly as the tool loop's do (the
 * adapter's budget, caps, pins and recorder; the approval gate), and answers the script's
 * result, or its error with the line, as this tool's result.
 */
export function runScriptTool(ctx: ScriptToolContext, declarations: string): Tool {
  return dynamicTool({
    description: `Runs a JavaScript async function body in a sandbox with these tools:\n${declarations}`,
    inputSchema: jsonSchema({
      type: "object",
      properties: { code: { type: "string", description: "The body of an async function; `return` what the answer needs." } },
      required: ["code"],
      additionalProperties: false,
    }),
    execute: async (input, { toolCallId }) => {
      const code = typeof input === "object" && input !== null && typeof Reflect.get(input, "code") === "string" ? String(Reflect.get(input, "code")) : "";
      const inner: string[] = [];
      ctx.innerCalls.set(toolCallId, inner);
      const started = Date.now();
      const args = rawPreview(code, TRACE_BOUNDS.toolArguments);
      // Provisional, as the adapter records a call: a cut-off run still shows the script.
      ctx.recorder.recordCall({
        toolCallId,
        name: RUN_SCRIPT,
        status: "cancelled",
        bytes: 0,
        elapsedMs: 0,
        error: "the run ended before the script did",
        args,
      });
      const outcome = await runScript(ctx.loader, code, bridgeCall(ctx, toolCallId, inner), { cpuMs: SCRIPT_CPU_MS, maxLogBytes: MAX_LOG_BYTES }, ctx.signal);
      const text = scriptAnswer(outcome);
      const cut = truncateUtf8(text, ctx.budget.limits.max_tool_result_bytes);
      const status = !outcome.ok ? "error" : cut.truncated ? "truncated" : "ok";
      ctx.recorder.recordCall(
        {
          toolCallId,
          name: RUN_SCRIPT,
          status,
          bytes: cut.totalBytes,
          elapsedMs: Date.now() - started,
          args,
          result: rawPreview(cut.text, TRACE_BOUNDS.toolResult),
          ...(outcome.ok ? {} : { error: outcome.line === undefined ? outcome.error : `line ${outcome.line}: ${outcome.error}` }),
        },
        cut.text,
      );
      return cut.text;
    },
  });
}

/** What the model reads back: the result (or error and its line), then the script's logs. */
export function scriptAnswer(outcome: ScriptOutcome): string {
  const head = outcome.ok ? outcome.value : `The script failed${outcome.line === undefined ? "" : ` at line ${outcome.line}`}: ${outcome.error}`;
  return outcome.logs.length === 0 ? head : `${head}\n\nconsole:\n${outcome.logs.join("\n")}`;
}

/**
 * A script's tool call, through the toolset's own tool (gated where approval is needed). Its
 * arguments are checked against the tool's schema first, as the AI SDK checks a model's call.
 */
function bridgeCall(ctx: ScriptToolContext, scriptCallId: string, inner: string[]) {
  return async (name: string, input: unknown): Promise<string> => {
    const toolCallId = `${scriptCallId}.${inner.length + 1}`;
    inner.push(toolCallId);
    const tool = ctx.tools.tools[name];
    if (!tool?.execute) {
      ctx.recorder.recordCall({ toolCallId, name, status: "refused", bytes: 0, elapsedMs: 0, error: "not available to this expert" });
      throw new Error(`unavailable tool '${name}': this script may call only ${ctx.tools.names.join(", ") || "no tools"}`);
    }
    const checked = await asSchema(tool.inputSchema).validate?.(input);
    if (checked && !checked.success) {
      ctx.recorder.recordCall({ toolCallId, name, status: "error", bytes: 0, elapsedMs: 0, error: "malformed arguments" });
      throw new Error(`${name}: ${checked.error.message}`);
    }
    const output: unknown = await tool.execute(input, { toolCallId, messages: [], abortSignal: ctx.signal, context: {} });
    return typeof output === "string" ? output : JSON.stringify(output);
  };
}

/** The code-mode model's tools: `run_script` only. */
export function codeModeTools(ctx: ScriptToolContext, declarations: string): ToolSet {
  return { [RUN_SCRIPT]: runScriptTool(ctx, declarations) };
}
