import { createMcpHandler } from "agents/mcp/server";
import { McpServer, fromJsonSchema } from "@modelcontextprotocol/server";
import { DurableObject } from "cloudflare:workers";

export class ExpertSession extends DurableObject<Env> {
  async ping(): Promise<string> {
    return "pong";
  }
}

const handler = createMcpHandler(
  () => {
    const server = new McpServer({ name: "spike", version: "0.0.0" });
    server.registerTool(
      "echo",
      {
        description: "echo",
        inputSchema: fromJsonSchema<{ text: string }>({
          type: "object",
          properties: { text: { type: "string" } },
          required: ["text"],
        }),
      },
      async (args, ctx) => {
        return { content: [{ type: "text", text: `echo:${args.text}` }] };
      },
    );
    return server;
  },
  { route: "/mcp" },
);

export default {
  fetch(request: Request, env: Env, ctx: ExecutionContext) {
    return handler(request, env, ctx);
  },
} satisfies ExportedHandler<Env>;
