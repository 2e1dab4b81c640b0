import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as StreamableHTTPClientTransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { describe, expect, it } from "vitest";
import type { UserProps } from "../../../src/auth/user-props";
import { META_RUN } from "../../../src/mcp/delivery/expert-tool-result";
import { LISTED_RUNS, RUN_URI_TEMPLATE } from "../../../src/mcp/server/run-resources";
import { useCatalogWithScriptedModels } from "../../support/workers/scripted-model";
import { askDocsCatalog } from "../expert-test-setup";
import { appFetchAs } from "../mcp-test-client";

const ann: UserProps = { userId: "dev-ann", login: "ann", role: "member" };
const ben: UserProps = { userId: "dev-ben", login: "ben", role: "member" };

type Kind = "v2-2025" | "v2-2026" | "v1";

interface Content {
  type: string;
  uri?: string;
  mimeType?: string;
  text?: string;
}

/** The calls the test makes, the same for an SDK v1 and an SDK v2 client. */
interface RunClient {
  call(query: string): Promise<{ content: Content[]; _meta?: Record<string, unknown> }>;
  list(): Promise<Array<{ uri: string; mimeType?: string; title?: string }>>;
  templates(): Promise<Array<{ uriTemplate: string }>>;
  read(uri: string): Promise<Array<{ uri: string; mimeType?: string; text?: string }>>;
  resourcesAdvertised(): boolean;
  close(): Promise<void>;
}

async function connectAs(user: UserProps, kind: Kind): Promise<RunClient> {
  const url = new URL("https://team.example.com/mcp");
  const fetch = (input: string | URL | Request, init?: RequestInit) => appFetchAs(user, input, init);
  const client =
    kind === "v1"
      ? new ClientV1({ name: "runs-v1", version: "0.0.0" })
      : new Client({ name: `runs-${kind}`, version: "0.0.0" }, kind === "v2-2026" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {});
  if (client instanceof ClientV1) await client.connect(new StreamableHTTPClientTransportV1(url, { fetch }));
  else await client.connect(new StreamableHTTPClientTransport(url, { fetch }));
  return {
    call: async (query) => (await client.callTool({ name: "ask_docs", arguments: { query } })) as { content: Content[]; _meta?: Record<string, unknown> },
    list: async () => (await client.listResources()).resources,
    templates: async () => (await client.listResourceTemplates()).resourceTemplates,
    read: async (uri) => (await client.readResource({ uri })).contents as Array<{ uri: string; mimeType?: string; text?: string }>,
    resourcesAdvertised: () => client.getServerCapabilities()?.resources !== undefined,
    close: () => client.close(),
  };
}

describe("runs as MCP resources", () => {
  const models = useCatalogWithScriptedModels(askDocsCatalog("default"));

  for (const kind of ["v2-2025", "v2-2026", "v1"] as const) {
    it(`an answer links its run, which its caller lists and reads, and another user cannot (${kind})`, async () => {
      const owner = await connectAs(ann, kind);
      const other = await connectAs(ben, kind);
      try {
        expect(owner.resourcesAdvertised()).toBe(true);
        expect(await owner.templates()).toEqual([expect.objectContaining({ uriTemplate: RUN_URI_TEMPLATE })]);

        models.play([{ calls: [{ name: "docs__search_docs", input: { query: "budget" } }] }, { text: `Answer for ${kind}.` }]);
        const result = await owner.call(`budgets, asked by ${kind}`);
        const runId = result._meta?.[META_RUN] as string;
        const uri = `slipsnisse://runs/${runId}`;
        // The link comes after the answer, which stays alone in the first block.
        expect(result.content[0]?.text).toMatch(new RegExp(`^Answer for ${kind}\\.`));
        expect(result.content.at(-1)).toMatchObject({ type: "resource_link", uri, mimeType: "text/markdown" });

        const listed = await owner.list();
        // Newest first: the run just made leads the list.
        expect(listed[0]).toMatchObject({ uri, mimeType: "text/markdown" });
        expect(listed[0]?.title).toContain("ask_docs: ok");

        const contents = await owner.read(uri);
        expect(contents.map((content) => [content.uri, content.mimeType])).toEqual([
          [uri, "text/markdown"],
          [uri, "application/json"],
        ]);
        const markdown = contents[0]?.text ?? "";
        expect(markdown).toContain(`# Run ${runId}`);
        expect(markdown).toContain("### ` docs__search_docs `: ok");
        expect(markdown).toContain(`Answer for ${kind}.`);
        expect(markdown).toContain(`budgets, asked by ${kind}`);
        const json = JSON.parse(contents[1]?.text ?? "null") as { run: { id: string; outcome: string; userId: string }; steps: unknown[] };
        expect(json.run).toMatchObject({ id: runId, outcome: "ok", userId: ann.userId });
        expect(json.steps).toHaveLength(2);

        // Another user's session does not hold the run: not listed, and read as not found, the
        // same answer a made-up id gets, so the refusal tells nothing of the run's existence.
        expect((await other.list()).map((resource) => resource.uri)).not.toContain(uri);
        const refusal = await errorOf(other.read(uri));
        const guess = `slipsnisse://runs/${crypto.randomUUID()}`;
        const unknown = await errorOf(owner.read(guess));
        expect(refusal.code).toBe(unknown.code);
        expect(refusal.message.replace(uri, "<uri>")).toBe(unknown.message.replace(guess, "<uri>"));
        expect(refusal.message).toMatch(/not found/i);
        expect(await errorOf(owner.read("slipsnisse://runs/not-a-run-id"))).toMatchObject({ code: unknown.code });
      } finally {
        await Promise.all([owner.close(), other.close()]);
      }
    });
  }

  it(`lists at most ${LISTED_RUNS} runs, newest first`, async () => {
    const client = await connectAs(ben, "v2-2026");
    try {
      models.play([{ text: "ok" }]);
      const runIds: string[] = [];
      for (let i = 0; i < 3; i++) runIds.push((await client.call(`question ${i}`))._meta?.[META_RUN] as string);
      const listed = (await client.list()).map((resource) => resource.uri);
      expect(listed.length).toBeLessThanOrEqual(LISTED_RUNS);
      expect(listed.slice(0, 3)).toEqual(runIds.reverse().map((id) => `slipsnisse://runs/${id}`));
    } finally {
      await client.close();
    }
  });
});

async function errorOf(promise: Promise<unknown>): Promise<{ code: unknown; message: string }> {
  try {
    await promise;
  } catch (error) {
    const { code, message } = error as { code?: unknown; message: string };
    return { code, message };
  }
  throw new Error("expected the read to be refused");
}
