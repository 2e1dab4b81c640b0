import { Client, SSEClientTransport, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport as SSEClientTransportV1 } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport as StreamableHTTPClientTransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { describe, expect, it } from "vitest";
import { askDocsCatalog } from "../expert-test-setup";
import { useCatalogWithScriptedModels } from "../../support/workers/scripted-model";
import { waitFor } from "../../support/wait-for";
import { selfFetch } from "../mcp-test-client";

/** Every 405 a client got, with its method and Allow header. */
interface Refused {
  method: string;
  allow: string | null;
}

function recordingFetch(refused: Refused[]): typeof fetch {
  return async (input, init) => {
    const response = await selfFetch(input, init);
    if (response.status === 405) refused.push({ method: init?.method ?? "GET", allow: response.headers.get("allow") });
    return response;
  };
}

type Kind = "v2-2025" | "v2-2026" | "v1-http" | "v2-sse" | "v1-sse";

async function capabilitiesOf(
  kind: Kind,
  refused: Refused[],
): Promise<{ listChanged: boolean | undefined; runsChanged: boolean | undefined; close: () => Promise<void> }> {
  const fetchFn = recordingFetch(refused);
  const url = new URL(kind.endsWith("-sse") ? "http://localhost/sse" : "http://localhost/mcp");
  if (kind === "v1-http" || kind === "v1-sse") {
    const client = new ClientV1({ name: `caps-${kind}`, version: "0.0.0" });
    await client.connect(kind === "v1-sse" ? new SSEClientTransportV1(url, { fetch: fetchFn }) : new StreamableHTTPClientTransportV1(url, { fetch: fetchFn }));
    const caps = client.getServerCapabilities();
    return { listChanged: caps?.tools?.listChanged, runsChanged: caps?.resources?.listChanged, close: () => client.close() };
  }
  const client = new Client({ name: `caps-${kind}`, version: "0.0.0" }, kind === "v2-2026" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {});
  await client.connect(kind === "v2-sse" ? new SSEClientTransport(url, { fetch: fetchFn }) : new StreamableHTTPClientTransport(url, { fetch: fetchFn }));
  const caps = client.getServerCapabilities();
  return { listChanged: caps?.tools?.listChanged, runsChanged: caps?.resources?.listChanged, close: () => client.close() };
}

/**
 * `tools.listChanged` is a promise to send `notifications/tools/list_changed`. 2026-07-28
 * clients receive it on `subscriptions/listen` and legacy SSE connections on their stream (the
 * session swaps the tools when the catalog changes: test/mcp/legacy-sse/legacy-sse.test.ts); a 2025 client
 * on stateless Streamable HTTP has no stream for it (its GET is refused), so it is not told it.
 * `resources.listChanged` (a new run in the caller's resources/list) goes to the same clients:
 * a 2026-07-28 listen stream hears of the caller's own runs only (test/e2e/oauth/listen-stream.e2e.test.ts).
 */
describe("advertised capabilities per protocol era and transport", () => {
  useCatalogWithScriptedModels(askDocsCatalog("default"));

  const expected: Record<Kind, boolean> = { "v2-2026": true, "v2-2025": false, "v1-http": false, "v2-sse": true, "v1-sse": true };
  for (const [kind, listChanged] of Object.entries(expected) as Array<[Kind, boolean]>) {
    it(`${kind} is ${listChanged ? "" : "not "}told tools.listChanged and resources.listChanged`, async () => {
      const refused: Refused[] = [];
      const connection = await capabilitiesOf(kind, refused);
      try {
        expect(Boolean(connection.listChanged)).toBe(listChanged);
        expect(Boolean(connection.runsChanged)).toBe(listChanged);
        // Every 405 the client met on its way in named the methods that are allowed.
        for (const refusal of refused) expect(refusal.allow, `${refusal.method} answered 405 without Allow`).toMatch(/POST|GET/);
      } finally {
        await connection.close();
      }
    });
  }

  for (const kind of ["v1-http", "v2-2025"] as const) {
    it(`a 2025 client's GET for a stream is refused with 405 and an Allow header (${kind})`, async () => {
      const refused: Refused[] = [];
      const connection = await capabilitiesOf(kind, refused);
      try {
        // The SDKs open the GET stream in the background after the handshake.
        await waitFor("the SDK's GET stream to be refused", () => (refused.length > 0 ? true : undefined), 5_000, 10);
        expect(refused).toEqual([{ method: "GET", allow: "POST, OPTIONS" }]);
      } finally {
        await connection.close();
      }
    });
  }

  it("every 405 on the MCP and SSE paths carries Allow", async () => {
    const answers = await Promise.all([
      selfFetch("http://localhost/mcp", { method: "GET", headers: { accept: "text/event-stream" } }),
      selfFetch("http://localhost/mcp", { method: "DELETE" }),
      selfFetch("http://localhost/mcp", { method: "GET", headers: { accept: "text/event-stream", "mcp-protocol-version": "2026-07-28" } }),
      selfFetch("http://localhost/sse", { method: "POST", body: "{}" }),
      selfFetch("http://localhost/sse/message?sessionId=x", { method: "GET" }),
    ]);
    expect(answers.map((answer) => [answer.status, answer.headers.get("allow")])).toEqual([
      [405, "POST, OPTIONS"],
      [405, "POST, OPTIONS"],
      [405, "POST, OPTIONS"],
      [405, "GET, OPTIONS"],
      [405, "POST, OPTIONS"],
    ]);
  });
});
