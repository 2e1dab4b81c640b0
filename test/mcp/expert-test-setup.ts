/** The built-in demo docs server, reached through the Worker's own service binding: a real downstream MCP server. */
export const DEMO_DOCS_SERVER = { binding: "SELF", url: "http://slipsnisse.internal/demo/docs/mcp", transport: "streamable-http" } as const;

/**
 * A catalog with one skill whose `ask_docs` expert may use `search_docs` on the demo docs server.
 * Its model endpoint is a closed port: tests answer through the scripted-model seam instead.
 */
export function askDocsCatalog(skill: string) {
  return {
    skills: {
      [skill]: {
        servers: { docs: DEMO_DOCS_SERVER },
        experts: [
          {
            name: "ask_docs",
            description: "Answers questions from the docs.",
            arguments: { type: "object", properties: { query: { type: "string" } }, required: ["query"], additionalProperties: false },
            internal_tools: { docs: ["search_docs"] },
            provider: "openai-compatible",
            base_url: "http://127.0.0.1:9/v1",
            model: "never-called",
          },
        ],
      },
    },
  };
}

/** The text blocks of a tool result, joined. */
export function textOf(result: { content?: unknown }): string {
  const blocks = (result.content ?? []) as Array<{ type: string; text?: string }>;
  return blocks.map((block) => block.text ?? "").join("");
}
