import { describe, expect, it } from "vitest";
import { profileOf } from "../../../../src/mcp/inbound/client-profile";
import { declaredBy, mintClientSessionId } from "../../../../src/mcp/inbound/client-session-id";
import { classifyPost, MID_CALL_REQUEST_ID_PREFIX } from "../../../../src/mcp/inbound/inbound-post";
import { PostedBody } from "../../../../src/mcp/inbound/posted-body";

function post(body: unknown, headers: Record<string, string> = {}) {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  const request = new Request("https://slipsnisse.test/mcp", { method: "POST", headers: { "content-type": "application/json", ...headers }, body: text });
  return classifyPost(request, new PostedBody(new TextEncoder().encode(text)));
}

const V2025 = { "mcp-protocol-version": "2025-11-25" };

describe("a POST is classified once", () => {
  it("one tools/call: its expert, its id, whether it asks for a task", () => {
    const inbound = post({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "ask_docs", arguments: {}, task: { ttl: 1000 } } }, V2025);
    expect(inbound.kind).toBe("tool-call");
    expect(inbound.toolCall).toEqual({ id: 7, name: "ask_docs", asksTask: true });
    expect(inbound.listsTools).toBe(false);
    expect(inbound.modern).toBeUndefined();
  });

  it("a batch is other, but its cancels and tools/list are still seen", () => {
    const inbound = post(
      [
        { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "a" } },
        { jsonrpc: "2.0", id: 2, method: "tools/list" },
        { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 3 } },
      ],
      { "mcp-protocol-version": "2025-03-26" },
    );
    expect(inbound.kind).toBe("other");
    expect(inbound.cancels).toEqual(["a", 3]);
    expect(inbound.listsTools).toBe(true);
    expect(inbound.toolCall).toBeUndefined();
  });

  it("only cancels is a cancel; a malformed cancel names nothing", () => {
    expect(post({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } }, V2025).kind).toBe("cancel");
    const malformed = post({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: { not: "an id" } } }, V2025);
    expect(malformed.cancels).toEqual([]);
    expect(malformed.kind).toBe("other");
  });

  it("replies to our mid-call requests: only ours, and a body of only them is a client reply", () => {
    const ours = `${MID_CALL_REQUEST_ID_PREFIX}1`;
    const only = post({ jsonrpc: "2.0", id: ours, result: { action: "accept" } }, V2025);
    expect(only.kind).toBe("client-reply");
    expect(only.replies).toEqual([{ id: ours, reply: { result: { action: "accept" } } }]);
    const mixed = post(
      [
        { jsonrpc: "2.0", id: ours, error: { code: -1, message: "no" } },
        { jsonrpc: "2.0", id: "someone-else", result: {} },
      ],
      V2025,
    );
    expect(mixed.kind).toBe("other");
    expect(mixed.replies).toEqual([{ id: ours, reply: { error: { code: -1, message: "no" } } }]);
  });

  it("initialize: its revision and capabilities make the profile; a clientSessionId is minted only for what needs one", () => {
    const capabilities = { elicitation: { form: {}, url: {} } };
    const inbound = post({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities, clientInfo: { name: "t", version: "1" } },
    });
    expect(inbound.kind).toBe("initialize");
    expect(inbound.initialize).toEqual({ capabilities });
    expect(inbound.profile).toMatchObject({ era: "2025", revision: "2025-11-25", tasks: "core", elicitation: { form: true, url: true }, midCall: "none" });
    expect(mintClientSessionId(capabilities)).toMatch(/\.fu$/);
    expect(mintClientSessionId({ roots: {} })).toBeUndefined();
  });

  it("a stateless 2025 request's capabilities come from its clientSessionId, never from its own envelope", () => {
    const id = mintClientSessionId({ elicitation: {} });
    const inbound = post(
      {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "x", _meta: { "io.modelcontextprotocol/clientCapabilities": { extensions: { "io.modelcontextprotocol/ui": {} } } } },
      },
      { ...V2025, "mcp-session-id": id ?? "" },
    );
    expect(inbound.profile).toMatchObject({
      clientSessionId: id,
      elicitation: { form: true, url: false },
      ui: false,
      midCall: "call-stream",
      userChannel: "elicit",
      resumableCalls: true,
    });
    expect(declaredBy("not-ours")).toBeUndefined();
  });

  it("a 2026-07-28 request declares in its envelope; listen needs its Mcp-Method header", () => {
    const envelope = { "io.modelcontextprotocol/clientCapabilities": { elicitation: {}, extensions: { "io.modelcontextprotocol/ui": {} } } };
    const listen = { jsonrpc: "2.0", id: 1, method: "subscriptions/listen", params: { notifications: {}, _meta: envelope } };
    const v2026 = { "mcp-protocol-version": "2026-07-28" };
    const withHeader = post(listen, { ...v2026, "mcp-method": "subscriptions/listen" });
    expect(withHeader.kind).toBe("listen");
    expect(withHeader.profile).toMatchObject({
      era: "2026-07-28",
      ui: true,
      userChannel: "input-required",
      cancel: "close-stream",
      tasks: "extension",
      listChanged: true,
    });
    expect(post(listen, v2026).kind).toBe("other");
  });

  it("no JSON is other, for the SDK to answer with its parse error", () => {
    const inbound = post("{not json", V2025);
    expect(inbound.json).toBeUndefined();
    expect(inbound.kind).toBe("other");
  });

  it("a legacy SSE stream gets the SDK's mid-call requests, list changes and core Tasks", () => {
    expect(profileOf({ transport: "legacy-sse", revision: undefined, capabilities: { elicitation: {} } })).toMatchObject({
      midCall: "sdk",
      userChannel: "elicit",
      tasks: "core",
      listChanged: true,
      runsChangedAfterCall: true,
      stateless: false,
      resumableCalls: false,
    });
  });
});
