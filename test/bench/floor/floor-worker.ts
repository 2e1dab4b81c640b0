import { McpServer } from "@modelcontextprotocol/server";
import { createMcpHandler } from "agents/mcp/server";
import { DurableObject } from "cloudflare:workers";
import { z } from "zod";

/**
 * The platform floor the bench divides the product's figures by (test/bench/figures/floor.ts):
 * the least a Worker must do for the same MCP exchange, on the same machine and in the same run.
 *
 *   /a/mcp  createMcpHandler alone: an `echo` tool answered in the Worker.
 *   /b/mcp  the same, the tool answered by a Durable Object (one RPC hop), as an expert call is.
 *   /c/mcp  the same, the object making `fetches` POSTs to a Node server first (the bench's fake
 *           model, asked the same chat completion as the product's no_tools expert): 1 is the
 *           floor of an expert call without a tool step (one model call), 3 of one with a tool
 *           step (model, tool, model).
 *
 * A fresh McpServer per request, as createMcpHandler asks of its factory and as the product does.
 */
interface FloorEnv {
  FLOOR_OBJECT: DurableObjectNamespace<FloorObject>;
  FLOOR_FETCH_URL: string;
}

const MODEL_BODY = JSON.stringify({ model: "no-tools", messages: [{ role: "user", content: "hi" }] });

export class FloorObject extends DurableObject<FloorEnv> {
  async echo(text: string, fetches: number): Promise<string> {
    for (let i = 0; i < fetches; i++) {
      const response = await fetch(`${this.env.FLOOR_FETCH_URL}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer floor" },
        body: MODEL_BODY,
      });
      await response.text();
    }
    return text;
  }
}

type Variant = "a" | "b" | "c";

function server(env: FloorEnv, variant: Variant): McpServer {
  const mcp = new McpServer({ name: "floor", version: "1.0.0" });
  mcp.registerTool(
    "echo",
    { description: "Echoes its text.", inputSchema: z.object({ text: z.string(), fetches: z.number().int().min(0).max(20).optional() }) },
    async ({ text, fetches }) => {
      const answer = variant === "a" ? text : await env.FLOOR_OBJECT.get(env.FLOOR_OBJECT.idFromName("floor")).echo(text, variant === "c" ? (fetches ?? 1) : 0);
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
    const variant = /^\/([abc])\/mcp$/.exec(path)?.[1] as Variant | undefined;
    if (variant === undefined) return new Response("Not Found", { status: 404 });
    let handler = handlers.get(variant);
    if (!handler) {
      handler = createMcpHandler(() => server(env, variant), { route: path, responseMode: "sse", allowedOriginHostnames: "*" });
      handlers.set(variant, handler);
    }
    return handler(request, env, ctx);
  },
};
