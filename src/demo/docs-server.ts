import { McpServer } from "@modelcontextprotocol/server";
import { createMcpHandler, type StatelessMcpHandler } from "agents/mcp/server";
import { z } from "zod";
import architecture from "../../docs/architecture.md";
import catalog from "../../docs/catalog.md";
import clients from "../../docs/clients.md";
import deploying from "../../docs/deploying.md";
import operating from "../../docs/operating.md";
import security from "../../docs/security.md";
import testing from "../../docs/testing.md";
import readme from "../../README.md";
import { search, splitSections, type DocSection } from "./doc-index";

/**
 * The built-in demo downstream server: search and read over this project's own documentation.
 * It makes `npm start` show a working catalog offline; the demo expert reaches it through the
 * Worker's own service binding, exactly as it would reach any other downstream server.
 */
export const DEMO_DOCS_PATH = "/demo/docs/mcp";

let sections: DocSection[] | undefined;
function docs(): DocSection[] {
  // The README and the docs/ pages a user reads; platform notes and generated-file notes are for
  // the project's developers, not for the demo expert's questions.
  sections ??= [
    ...splitSections("readme", readme),
    ...splitSections("catalog", catalog),
    ...splitSections("clients", clients),
    ...splitSections("operating", operating),
    ...splitSections("deploying", deploying),
    ...splitSections("security", security),
    ...splitSections("architecture", architecture),
    ...splitSections("testing", testing),
  ];
  return sections;
}

function buildDocsServer(): McpServer {
  const server = new McpServer({ name: "slipsnisse-docs", version: "0.1.0" });
  server.registerTool(
    "search_docs",
    {
      description: "Search the Slipsnisse documentation. Returns matching sections with a path to read.",
      inputSchema: z.object({ query: z.string().min(1), limit: z.number().int().min(1).max(10).default(5) }),
      annotations: { readOnlyHint: true },
    },
    ({ query, limit }) => {
      const hits = search(docs(), query, limit);
      const text = hits.length ? hits.map((hit) => `- ${hit.title} (path: ${hit.path})\n  ${hit.snippet}`).join("\n") : `No section matches "${query}".`;
      return { content: [{ type: "text", text }] };
    },
  );
  server.registerTool(
    "read_doc",
    {
      description: "Read one documentation section by the path search_docs returned.",
      inputSchema: z.object({ path: z.string().min(1) }),
      annotations: { readOnlyHint: true },
    },
    ({ path }) => {
      const section = docs().find((candidate) => candidate.path === path);
      if (!section) return { isError: true, content: [{ type: "text", text: `No section at path "${path}". Use search_docs first.` }] };
      return { content: [{ type: "text", text: `# ${section.title}\n\n${section.text}` }] };
    },
  );
  return server;
}

let handler: StatelessMcpHandler | undefined;
export function serveDemoDocs(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
  handler ??= createMcpHandler(buildDocsServer, { route: DEMO_DOCS_PATH });
  return handler(request, env, ctx);
}
