import { describe, expect, it } from "vitest";
import type { ExpertCallResult } from "../../../src/experts/core/call-types";
import { META_THREAD, toToolResult } from "../../../src/mcp/delivery/expert-tool-result";

const usage = {
  steps: 1,
  inputTokens: 1,
  outputTokens: 1,
  toolCalls: 0,
  refusedToolCalls: 0,
  downstreamBytesRead: 0,
  bytesReturned: 2,
  elapsedMs: 1,
  budgetExhausted: null,
  retries: 0,
};
const call = (fields: Partial<ExpertCallResult>): ExpertCallResult => ({ runId: "r", outcome: "ok", text: "{}", thread: "th_1", usage, ...fields });

describe("toToolResult for structured experts", () => {
  it("a run of a structured expert that ended without a structured answer (cancelled) is a tool error", () => {
    const result = toToolResult(call({ outcome: "cancelled", text: "The expert call was cancelled by the caller." }), true);
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
  });

  it("a structured answer keeps the JSON alone in the first text block", () => {
    const result = toToolResult(call({ text: '{"a":1}', structured: { a: 1 } }), true);
    expect(result.structuredContent).toEqual({ a: 1 });
    expect(result.content[0]).toEqual({ type: "text", text: '{"a":1}' });
    expect(result.content).toHaveLength(2);
  });

  it("a plain expert's answer is unchanged: text plus the thread trailer in one block", () => {
    const result = toToolResult(call({ text: "answer" }));
    expect(result.content).toEqual([{ type: "text", text: 'answer\n\n(thread: th_1 — pass it as "thread" to ask a follow-up)' }]);
  });

  it("a run without a thread (a refused continuation) names no thread in _meta or the text", () => {
    const result = toToolResult(call({ outcome: "error", text: "Thread th_x does not exist for this user", thread: undefined }));
    expect(result._meta).not.toHaveProperty(META_THREAD);
    expect(JSON.stringify(result.content)).not.toContain("pass it as");
  });

  it("a recorded run (it has a trace id) links its trace as the last content item; the answer blocks are unchanged", () => {
    const link = { type: "resource_link", uri: "slipsnisse://runs/r", mimeType: "text/markdown" };
    const plain = toToolResult(call({ text: "answer", traceId: "t" }));
    expect(plain.content).toHaveLength(2);
    expect(plain.content[0]).toEqual(toToolResult(call({ text: "answer" })).content[0]);
    expect(plain.content[1]).toMatchObject(link);
    const structured = toToolResult(call({ text: '{"a":1}', structured: { a: 1 }, traceId: "t" }), true);
    expect(structured.content[0]).toEqual({ type: "text", text: '{"a":1}' });
    expect(structured.content.at(-1)).toMatchObject(link);
    const failed = toToolResult(call({ outcome: "error", text: "failed", traceId: "t" }));
    expect(failed.isError).toBe(true);
    expect(failed.content.at(-1)).toMatchObject(link);
  });
});
