import { Client, StreamableHTTPClientTransport, type Tool as McpTool } from "@modelcontextprotocol/client";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { McpServer } from "@modelcontextprotocol/server";
import { dynamicTool, generateText, isStepCount, jsonSchema, type JSONSchema7, type LanguageModel, type ToolSet } from "ai";
import { createMcpHandler } from "agents/mcp/server";
import { DurableObject } from "cloudflare:workers";
import { z } from "zod";
import { AI_SDK_TELEMETRY } from "../../../src/experts/models/model-defaults";
import defaultSystemPrompt from "../../../src/experts/run/prompts/default-system-prompt.md";
import { LIBRARY_FLOOR_BUDGET, LIBRARY_FLOOR_EXPERT_NAMES, LIBRARY_FLOOR_EXPERTS, type LibraryFloorExpert } from "./library-floor-experts";

/**
 * The platform floor the bench divides the product's figures by (test/bench/figures/floor-goals.ts):
 * the least a Worker must do for the same MCP exchange, on the same machine and in the same run.
 *
 *   /a/mcp  createMcpHandler alone: an `echo` tool answered in the Worker.
 *   /b/mcp  the same, the tool answered by a Durable Object (one RPC hop), as an expert call is.
 *   /c/mcp  the same, the object making `fetches` POSTs first, the fetches of an expert call in
 *           its order: the 1st, 3rd, … to the bench's fake model (the chat completion of the
 *           product's no_tools expert), the 2nd, 4th, … a `tools/call` of `echo` to the fixture
 *           echo server the product's tool steps call, each answer read whole. 1 is the floor of an
 *           expert call without a tool step (one model call), 3 of one with a tool step (model,
 *           tool, model), 11 of five. The tool POSTs go where the product's go because that
 *           server (an MCP SDK server in Node, answering in SSE) takes longer to answer than the
 *           fake model: a floor that asked the model instead would bill that server's time to
 *           the product.
 *   /d/mcp  the library floor: tools `no_tools`, `one_call`, `many_steps` (each `{ query }`, as
 *           the product's experts), answered by a Durable Object that runs the libraries the
 *           product must use and nothing else: the AI SDK's generateText with
 *           @ai-sdk/openai-compatible against the same fake model, its tools calling the same
 *           fixture echo server through an MCP SDK v2 Client over Streamable HTTP, kept open
 *           and listed once per object as the product's DownstreamPool does, each library
 *           configured as the product configures it (the AI SDK's telemetry off). No traces,
 *           limits, run records, redaction, byte caps or schema validation of our own: D over C
 *           is the libraries' part of the product's cost, the product over D ours.
 *   /e/mcp  D with a durable run record: the object writes a row before generateText and updates
 *           it after, so the call commits twice, as the product's session does (a "running" row
 *           a restart can close, then the run's end). E over D is what those two commits cost on
 *           this platform, the product over E ours besides them.
 *
 * A fresh McpServer per request, as createMcpHandler asks of its factory and as the product does.
 */
interface FloorEnv {
  FLOOR_OBJECT: DurableObjectNamespace<FloorObject>;
  FLOOR_FETCH_URL: string;
  /** The fixture echo server's MCP endpoint (its own stats tag), for D's downstream client. */
  FLOOR_MCP_URL: string;
  /** The same server under C's stats tag: C's tool POSTs, counted apart from D's calls. */
  FLOOR_TOOL_URL: string;
}

const MODEL_BODY = JSON.stringify({ model: "no-tools", messages: [{ role: "user", content: "hi" }] });

/**
 * A tool step's POST as the product's MCP client sends it after its handshake: the echo fixture
 * is stateless (no session id to carry), and a Streamable HTTP client must accept both answers.
 */
const TOOL_HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": "2025-11-25",
};
const toolCallBody = (id: number) => JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "echo", arguments: { text: "ping" } } });

/** The product's downstream client names itself so too (src/downstream/connect-downstream.ts). */
const CLIENT_INFO = { name: "slipsnisse-floor", version: "0.1.0" };

interface Downstream {
  client: Client;
  /** The server's tools, listed once (the product keeps its listing in memory the same way). */
  tools: McpTool[];
}

export class FloorObject extends DurableObject<FloorEnv> {
  private downstream: Promise<Downstream> | undefined;
  private readonly models = new Map<string, LanguageModel>();

  constructor(ctx: DurableObjectState, env: FloorEnv) {
    super(ctx, env);
    ctx.storage.sql.exec(
      `CREATE TABLE IF NOT EXISTS runs (id TEXT PRIMARY KEY, expert TEXT NOT NULL, started_at INTEGER NOT NULL, ended_at INTEGER, answer TEXT)`,
    );
  }

  async echo(text: string, fetches: number): Promise<string> {
    for (let i = 0; i < fetches; i++) {
      const tool = i % 2 === 1;
      const response = tool
        ? await fetch(this.env.FLOOR_TOOL_URL, { method: "POST", headers: TOOL_HEADERS, body: toolCallBody(i) })
        : await fetch(`${this.env.FLOOR_FETCH_URL}/chat/completions`, {
            method: "POST",
            headers: { "content-type": "application/json", authorization: "Bearer floor" },
            body: MODEL_BODY,
          });
      const body = await response.text();
      // A floor whose fetches failed would be fast and wrong.
      if (!response.ok || (tool && !body.includes('"result"')))
        throw new Error(`floor C: fetch ${i + 1} of ${fetches} answered HTTP ${response.status}: ${body.slice(0, 200)}`);
    }
    return text;
  }

  /** Floor D: one expert call, the libraries alone. */
  async expert(name: LibraryFloorExpert, query: string): Promise<string> {
    const expert = LIBRARY_FLOOR_EXPERTS[name];
    const { client, tools: listed } = await this.connected();
    // Built per call from the kept listing, as the product's buildExpertToolset does.
    const tools: ToolSet = {};
    for (const [serverId, whitelist] of Object.entries(expert.tools)) {
      for (const toolName of whitelist) {
        const tool = listed.find((t) => t.name === toolName);
        if (!tool) throw new Error(`floor D: the echo server does not list ${toolName}`);
        tools[`${serverId}__${tool.name}`] = dynamicTool({
          description: tool.description ?? tool.name,
          inputSchema: jsonSchema(tool.inputSchema as JSONSchema7),
          execute: async (input) => {
            const result = await client.callTool({ name: tool.name, arguments: input as Record<string, unknown> });
            return result.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("\n\n");
          },
        });
      }
    }
    const result = await generateText({
      model: this.model(expert.model),
      instructions: defaultSystemPrompt,
      messages: [{ role: "user", content: query }],
      tools,
      stopWhen: isStepCount(LIBRARY_FLOOR_BUDGET.maxSteps),
      maxOutputTokens: LIBRARY_FLOOR_BUDGET.maxOutputTokens,
      maxRetries: 0,
      // The product's configuration of the library: with telemetry on (the SDK's default) every
      // call opens a diagnostics-channel span the product never pays for, and D would bill it
      // to the libraries.
      telemetry: AI_SDK_TELEMETRY,
    });
    return result.text;
  }

  /**
   * Floor E: D's call with the least durable record of it. The INSERT commits at the end of its
   * turn, before the model request may leave (the output gate), the UPDATE before the answer may.
   */
  async recordedExpert(name: LibraryFloorExpert, query: string): Promise<string> {
    const id = crypto.randomUUID();
    const sql = this.ctx.storage.sql;
    sql.exec(`INSERT INTO runs (id, expert, started_at) VALUES (?, ?, ?)`, id, name, Date.now());
    const text = await this.expert(name, query);
    sql.exec(`UPDATE runs SET ended_at = ?, answer = ? WHERE id = ?`, Date.now(), text, id);
    return text;
  }

  /** One chat model per model id for the object's life (the product memoises its models too). */
  private model(modelId: string): LanguageModel {
    let model = this.models.get(modelId);
    if (!model) {
      model = createOpenAICompatible({ name: "openai-compatible", baseURL: this.env.FLOOR_FETCH_URL }).chatModel(modelId);
      this.models.set(modelId, model);
    }
    return model;
  }

  /** The object's one MCP client to the echo server, connected and listed on first use. */
  private connected(): Promise<Downstream> {
    this.downstream ??= (async () => {
      const client = new Client(CLIENT_INFO, { versionNegotiation: { mode: "auto" } });
      await client.connect(new StreamableHTTPClientTransport(new URL(this.env.FLOOR_MCP_URL)));
      const { tools } = await client.listTools();
      return { client, tools };
    })().catch((error: unknown) => {
      this.downstream = undefined;
      throw error;
    });
    return this.downstream;
  }
}

type Variant = "a" | "b" | "c" | "d" | "e";

const floorObject = (env: FloorEnv) => env.FLOOR_OBJECT.get(env.FLOOR_OBJECT.idFromName("floor"));

function server(env: FloorEnv, variant: Variant): McpServer {
  const mcp = new McpServer({ name: "floor", version: "1.0.0" });
  if (variant === "d" || variant === "e") {
    for (const name of LIBRARY_FLOOR_EXPERT_NAMES) {
      mcp.registerTool(
        name,
        { description: `Library floor of the bench's ${name} expert.`, inputSchema: z.object({ query: z.string() }) },
        async ({ query }) => {
          const object = floorObject(env);
          const text = variant === "e" ? await object.recordedExpert(name, query) : await object.expert(name, query);
          return { content: [{ type: "text", text }] };
        },
      );
    }
    return mcp;
  }
  mcp.registerTool(
    "echo",
    { description: "Echoes its text.", inputSchema: z.object({ text: z.string(), fetches: z.number().int().min(0).max(20).optional() }) },
    async ({ text, fetches }) => {
      const answer = variant === "a" ? text : await floorObject(env).echo(text, variant === "c" ? (fetches ?? 1) : 0);
      return { content: [{ type: "text", text: answer }] };
    },
  );
  return mcp;
}

const handlers = new Map<Variant, ReturnType<typeof createMcpHandler>>();

export default {
  async fetch(request: Request, env: FloorEnv, ctx: ExecutionContext): Promise<Response> {
    const path = new URL(request.url).pathname;
    if (path === "/healthz") return new Response("ok");
    const variant = /^\/([abcde])\/mcp$/.exec(path)?.[1] as Variant | undefined;
    if (variant === undefined) return new Response("Not Found", { status: 404 });
    let handler = handlers.get(variant);
    if (!handler) {
      handler = createMcpHandler(() => server(env, variant), { route: path, responseMode: "sse", allowedOriginHostnames: "*" });
      handlers.set(variant, handler);
    }
    return handler(request, env, ctx);
  },
};
