import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { serveStatelessRequest } from "../fixtures/stateless-mcp-request";

/**
 * Downstream servers shaped like real ones (a code host, a tracker, a wiki): many tools with
 * descriptions and argument schemas of realistic length, so the bench can compare what an
 * orchestrator would see connected to them directly with the few expert tools Slipsnisse shows.
 */
const VERBS = ["list", "get", "search", "create", "update", "delete", "comment_on", "close", "reopen", "label", "assign", "link"];

export interface ManyToolsServer {
  name: string;
  /** The MCP endpoint, e.g. http://127.0.0.1:40000/mcp */
  url: string;
  toolNames: string[];
  /** JSON-RPC requests received, by kind (batches counted per message). */
  stats(): { requests: number; initialize: number; toolsList: number; toolsCall: number };
  stop(): Promise<void>;
}

function methodsOf(body: unknown): string[] {
  const messages = Array.isArray(body) ? body : [body];
  return messages.flatMap((m) => (typeof m === "object" && m !== null && "method" in m && typeof m.method === "string" ? [m.method] : []));
}

function toolsOf(name: string, nouns: string[]): Array<{ tool: string; description: string }> {
  return nouns.flatMap((noun) =>
    VERBS.map((verb) => ({
      tool: `${verb}_${noun}`,
      description:
        `${verb.replace("_", " ")} ${noun.replace("_", " ")} records in ${name}. Use it when the user refers to a ${noun} ` +
        `by id, title or URL; results are paginated (page, per_page) and include timestamps, authors and links.`,
    })),
  );
}

function buildServer(name: string, tools: Array<{ tool: string; description: string }>): McpServer {
  const server = new McpServer({ name, version: "1.0.0" });
  for (const { tool, description } of tools) {
    server.registerTool(
      tool,
      {
        description,
        inputSchema: {
          id: z.string().optional().describe("The record id, e.g. ABC-123."),
          query: z.string().optional().describe("Free text; matched against titles and bodies."),
          page: z.number().int().min(1).optional().describe("1-based page number."),
          per_page: z.number().int().min(1).max(100).optional().describe("Items per page (max 100)."),
        },
      },
      async (args) => ({ content: [{ type: "text", text: `${name}.${tool} ${JSON.stringify(args)}` }] }),
    );
  }
  return server;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  return text ? (JSON.parse(text) as unknown) : undefined;
}

/** A stateless Streamable HTTP MCP server (SDK v1) with `nouns.length * 12` tools at `/mcp`. */
export async function startManyToolsServer(name: string, nouns: string[]): Promise<ManyToolsServer> {
  const tools = toolsOf(name, nouns);
  const counts = { requests: 0, initialize: 0, toolsList: 0, toolsCall: 0 };
  const http = createServer((req, res) => {
    if (req.method !== "POST" || req.url !== "/mcp") {
      res.writeHead(req.url === "/mcp" ? 405 : 404).end();
      return;
    }
    void (async () => {
      const body = await readJson(req);
      counts.requests += 1;
      for (const method of methodsOf(body)) {
        if (method === "initialize") counts.initialize += 1;
        if (method === "tools/list") counts.toolsList += 1;
        if (method === "tools/call") counts.toolsCall += 1;
      }
      const server = buildServer(name, tools);
      await serveStatelessRequest(server, req, res, body);
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", () => resolve()));
  const { port } = http.address() as AddressInfo;
  return {
    name,
    url: `http://127.0.0.1:${port}/mcp`,
    toolNames: tools.map((t) => t.tool),
    stats: () => ({ ...counts }),
    stop: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

/** Three servers, 72 tools together. */
export async function startManyToolsServers(): Promise<ManyToolsServer[]> {
  return Promise.all([
    startManyToolsServer("codehost", ["issue", "pull_request"]),
    startManyToolsServer("tracker", ["ticket", "sprint"]),
    startManyToolsServer("wiki", ["page", "space"]),
  ]);
}
