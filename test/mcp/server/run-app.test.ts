import { Client, SSEClientTransport, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { getUiCapability, EXTENSION_ID, RESOURCE_MIME_TYPE, RESOURCE_URI_META_KEY } from "@modelcontextprotocol/ext-apps/server";
import { describe, expect, it } from "vitest";
import type { UserProps } from "../../../src/auth/user-props";
import { META_RUN } from "../../../src/mcp/delivery/expert-tool-result";
import { declaredBy, mintClientSessionId } from "../../../src/mcp/inbound/client-session-id";
import { APP_MIME_TYPE, declaresUi, UI_EXTENSION } from "../../../src/mcp/inbound/declared-capabilities";
import { RUN_APP_CSP, RUN_APP_URI } from "../../../src/mcp/server/run-app";
import { useCatalogWithScriptedModels } from "../../support/workers/scripted-model";
import { askDocsCatalog } from "../expert-test-setup";
import { appFetchAs, selfFetch } from "../mcp-test-client";

const SKILL = "run-app-skill";
const cleo: UserProps = { userId: "dev-run-app-cleo", login: "cleo", role: "member" };
const dan: UserProps = { userId: "dev-run-app-dan", login: "dan", role: "member" };
const HOSTILE = `</script><script>alert("answer")</script><img src=x onerror=alert(1)> & "quotes"`;
const UI_CAPABILITIES = { extensions: { [UI_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } } };

type Era = "2025" | "2026";

/** Every request's raw JSON-RPC body, so a test can compare what two clients were sent, byte for byte. */
async function connect(user: UserProps, era: Era, ui: boolean, bodies?: string[]): Promise<Client> {
  const fetch = async (input: string | URL | Request, init?: RequestInit) => {
    const response = await appFetchAs(user, input, init);
    if (!bodies) return response;
    const text = await response.text();
    bodies.push(text);
    return new Response(text, response);
  };
  const client = new Client(
    { name: `run-app-${era}`, version: "0.0.0" },
    {
      ...(era === "2026" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {}),
      ...(ui ? { capabilities: UI_CAPABILITIES } : {}),
    },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(`https://team.example.com/s/${SKILL}/mcp`), { fetch }));
  return client;
}

/** The JSON-RPC result in a response body (plain JSON or one SSE `data:` event). */
function resultOf(body: string): unknown {
  const data = body.startsWith("{") ? body : (body.split("\n").find((line) => line.startsWith("data: {")) ?? "").slice("data: ".length);
  return (JSON.parse(data) as { result: unknown }).result;
}

describe("the run view as an MCP App (io.modelcontextprotocol/ui)", () => {
  const models = useCatalogWithScriptedModels(askDocsCatalog(SKILL));

  it("names the extension, MIME type and meta key exactly as @modelcontextprotocol/ext-apps does", () => {
    expect(UI_EXTENSION).toBe(EXTENSION_ID);
    expect(APP_MIME_TYPE).toBe(RESOURCE_MIME_TYPE);
    expect(declaresUi(UI_CAPABILITIES)).toBe(getUiCapability(UI_CAPABILITIES) !== undefined);
    expect(declaresUi({ extensions: { [UI_EXTENSION]: { mimeTypes: ["text/html+other"] } } })).toBe(false);
    expect(declaresUi({ extensions: { [UI_EXTENSION]: {} } })).toBe(true);
    expect(declaresUi({ elicitation: {} })).toBe(false);
    expect(declaresUi(undefined)).toBe(false);
  });

  it("remembers a stateless 2025 client's declaration in the Mcp-Session-Id it mints, beside elicitation", () => {
    const both = mintClientSessionId({ elicitation: {}, ...UI_CAPABILITIES });
    expect(both).toMatch(/\.fa$/);
    expect(declaredBy(both)).toEqual({ elicitation: { form: {} }, ...UI_CAPABILITIES });
    const appOnly = mintClientSessionId(UI_CAPABILITIES);
    expect(appOnly).toMatch(/\.a$/);
    // No elicitation: such a client's runs pause for approval (userChannel), as before.
    expect(declaredBy(appOnly)).toEqual(UI_CAPABILITIES);
    expect(mintClientSessionId({ roots: {} })).toBeUndefined();
    expect(declaredBy(`${crypto.randomUUID()}.x`)).toBeUndefined();
  });

  it("over legacy HTTP+SSE too: what `initialize` declared decides the connection's tools", async () => {
    const connectSse = async (ui: boolean) => {
      const client = new Client({ name: "run-app-sse", version: "0.0.0" }, ui ? { capabilities: UI_CAPABILITIES } : {});
      await client.connect(new SSEClientTransport(new URL(`http://localhost/s/${SKILL}/sse`), { fetch: selfFetch }));
      return client;
    };
    const [plain, app] = await Promise.all([connectSse(false), connectSse(true)]);
    try {
      expect((await plain.listTools()).tools.map((tool) => tool._meta)).toEqual([undefined]);
      expect(plain.getServerCapabilities()?.extensions?.[UI_EXTENSION]).toBeUndefined();
      expect((await plain.listResources()).resources.map((resource) => resource.uri)).not.toContain(RUN_APP_URI);
      expect((await app.listTools()).tools.map((tool) => tool._meta)).toEqual([{ ui: { resourceUri: RUN_APP_URI }, [RESOURCE_URI_META_KEY]: RUN_APP_URI }]);
      expect(app.getServerCapabilities()?.extensions?.[UI_EXTENSION]).toEqual({});
      expect((await app.listResources()).resources.map((resource) => resource.uri)).toContain(RUN_APP_URI);
    } finally {
      await Promise.all([plain.close(), app.close()]);
    }
  });

  for (const era of ["2025", "2026"] as const) {
    it(`without the extension a client gets what it got before: no _meta.ui, no ui:// resource, no HTML in a run (${era})`, async () => {
      const plainBodies: string[] = [];
      const plain = await connect(cleo, era, false, plainBodies);
      const uiBodies: string[] = [];
      const app = await connect(cleo, era, true, uiBodies);
      try {
        // The server names the extension among its capabilities only to the client that declared it.
        expect(plain.getServerCapabilities()?.extensions?.[UI_EXTENSION]).toBeUndefined();
        expect(app.getServerCapabilities()?.extensions?.[UI_EXTENSION]).toEqual({});
        plainBodies.length = 0;
        uiBodies.length = 0;
        const plainTools = await plain.listTools(undefined, { cacheMode: "bypass" });
        const appTools = await app.listTools(undefined, { cacheMode: "bypass" });
        expect(plainTools.tools.map((tool) => tool._meta)).toEqual([undefined]);
        expect(appTools.tools.map((tool) => tool._meta)).toEqual([{ ui: { resourceUri: RUN_APP_URI }, [RESOURCE_URI_META_KEY]: RUN_APP_URI }]);
        // Byte for byte: the plain list is the app's list with only the tools' `_meta` taken out.
        const plainRaw = plainBodies.find((body) => body.includes('"tools"')) ?? "";
        const appRaw = uiBodies.find((body) => body.includes('"tools"')) ?? "";
        const appResult = resultOf(appRaw) as { tools: Array<Record<string, unknown>> };
        for (const tool of appResult.tools) delete tool._meta;
        expect(JSON.stringify(resultOf(plainRaw))).toBe(JSON.stringify(appResult));
        expect(plainRaw).not.toContain("ui://");
        expect(plainRaw).not.toContain(UI_EXTENSION);

        const plainResources = (await plain.listResources(undefined, { cacheMode: "bypass" })).resources;
        expect(plainResources.map((resource) => resource.uri)).not.toContain(RUN_APP_URI);
        await expect(plain.readResource({ uri: RUN_APP_URI })).rejects.toThrow();

        models.play([{ text: `plain answer ${era}` }]);
        const result = await plain.callTool({ name: "ask_docs", arguments: { query: "plain" } });
        const contents = (await plain.readResource({ uri: `slipsnisse://runs/${result._meta?.[META_RUN] as string}` })).contents;
        expect(contents.map((content) => content.mimeType)).toEqual(["text/markdown", "application/json"]);
      } finally {
        await Promise.all([plain.close(), app.close()]);
      }
    });

    it(`with the extension: the tools link the app, its page is listed and read with a CSP that allows no network (${era})`, async () => {
      const app = await connect(cleo, era, true);
      try {
        const listed = (await app.listResources(undefined, { cacheMode: "bypass" })).resources.find((resource) => resource.uri === RUN_APP_URI);
        expect(listed).toMatchObject({ uri: RUN_APP_URI, mimeType: APP_MIME_TYPE });
        const [page] = (await app.readResource({ uri: RUN_APP_URI })).contents;
        expect(page).toMatchObject({ uri: RUN_APP_URI, mimeType: APP_MIME_TYPE, _meta: { ui: { csp: { connectDomains: [], resourceDomains: [] } } } });
        expect(RUN_APP_CSP).toEqual({ connectDomains: [], resourceDomains: [] });
        const html = page && "text" in page ? page.text : "";
        // Self-contained: one inline script and style, nothing that loads from anywhere.
        expect(html.match(/<script\b/g)).toHaveLength(1);
        expect(html).not.toMatch(/<script[^>]*\bsrc=|<link\b|<img\b|<iframe\b|@import|url\(|https?:\/\//i);
      } finally {
        await app.close();
      }
    });

    it(`a run read by the app carries the waterfall as escaped HTML, and only for its own user (${era})`, async () => {
      const app = await connect(cleo, era, true);
      const other = await connect(dan, era, true);
      try {
        models.play([{ calls: [{ name: "docs__search_docs", input: { query: HOSTILE } }] }, { text: `Answer ${era}: ${HOSTILE}` }]);
        const result = await app.callTool({ name: "ask_docs", arguments: { query: `hostile ${era}` } });
        const uri = `slipsnisse://runs/${result._meta?.[META_RUN] as string}`;
        const contents = await app.readResource({ uri });
        const fragment = contents.contents.find((content) => content.mimeType === "text/html");
        const text = fragment && "text" in fragment ? fragment.text : "";
        expect(text).toContain('<ol class="wf"');
        expect(text).toContain("wf-bar wf-model");
        expect(text).toContain("docs__search_docs");
        expect(text).toContain("&lt;/script&gt;&lt;script&gt;alert(&quot;answer&quot;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;");
        expect(text).not.toMatch(/<script|<img|<\/script/i);
        // Another user (also an app client) reads the same id as not found.
        await expect(other.readResource({ uri })).rejects.toThrow(/not found/i);
      } finally {
        await Promise.all([app.close(), other.close()]);
      }
    });
  }
});
