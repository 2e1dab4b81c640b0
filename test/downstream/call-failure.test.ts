import { ProtocolError, SdkError, SdkErrorCode, SdkHttpError } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { classifyCallFailure, type CallFailureContext } from "../../src/downstream/call-failure";

const context = (overrides: Partial<CallFailureContext> = {}): CallFailureContext => ({
  serverId: "docs",
  target: "search",
  timeoutMs: 1_000,
  maxResponseBytes: 4_096,
  signal: undefined,
  redact: (text) => text.replaceAll("s3cret", "[redacted]"),
  ...overrides,
});

describe("classifyCallFailure", () => {
  it("a caller's abort wins over whatever the SDK threw", () => {
    const controller = new AbortController();
    controller.abort();
    expect(classifyCallFailure(new Error("boom"), context({ signal: controller.signal }))).toMatchObject({
      kind: "downstream-call-aborted",
    });
  });

  it("an SDK request timeout is a timeout", () => {
    const error = new SdkError(SdkErrorCode.RequestTimeout, "Request timed out");
    expect(classifyCallFailure(error, context())).toMatchObject({ kind: "downstream-timeout", timeoutMs: 1_000 });
  });

  it("a JSON-RPC error is a refusal by a live server, its text redacted", () => {
    const failure = classifyCallFailure(new ProtocolError(-32602, "bad token s3cret"), context());
    expect(failure).toMatchObject({ kind: "downstream-protocol", code: "JSON-RPC -32602" });
    expect(failure.message).toContain("[redacted]");
    expect(failure.message).not.toContain("s3cret");
  });

  it("a result that breaks the output schema is a refusal too", () => {
    const failure = classifyCallFailure(new SdkError(SdkErrorCode.InvalidResult, "bad structuredContent"), context());
    expect(failure).toMatchObject({ kind: "downstream-protocol", code: "INVALID_RESULT" });
  });

  it("HTTP and network failures mean the server is unavailable", () => {
    const http = new SdkHttpError(SdkErrorCode.ClientHttpNotImplemented, "Error POSTing: s3cret", { status: 502 });
    const failure = classifyCallFailure(http, context());
    expect(failure).toMatchObject({ kind: "downstream-unavailable", serverId: "docs" });
    expect(failure.message).toContain("HTTP 502");
    expect(failure.message).not.toContain("s3cret");
    expect(classifyCallFailure(new TypeError("Network connection lost."), context())).toMatchObject({
      kind: "downstream-unavailable",
    });
  });
});
