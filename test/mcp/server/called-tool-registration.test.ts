import { McpServer } from "@modelcontextprotocol/server";
import { afterEach, describe, expect, it, vi } from "vitest";
import { useCatalogWithScriptedModels } from "../../support/workers/scripted-model";
import { expertOf } from "../../support/workers/session-helpers";
import { connectClient, type Era } from "../mcp-test-client";

const SKILL = "called-tool-only";

/**
 * createMcpHandler builds a server per request: a single tools/call registers only the expert it
 * calls (a skill's experts each cost a registration), while tools/list and the handshake see them
 * all, and a call of a tool the skill lacks is the SDK's own error as before.
 */
describe("a stateless tools/call registers only the expert it calls", () => {
  const models = useCatalogWithScriptedModels({
    skills: { [SKILL]: { servers: {}, experts: [expertOf("ask_one", {}), expertOf("ask_two", {}), expertOf("ask_three", {})] } },
  });
  afterEach(() => vi.restoreAllMocks());

  for (const era of ["2025", "2026"] as const satisfies readonly Era[]) {
    it(`${era} client: lists all three, and calling one registers that one`, async () => {
      const client = await connectClient(`/s/${SKILL}/mcp`, era);
      try {
        expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(["ask_one", "ask_two", "ask_three"]);
        const registered: string[] = [];
        const register = McpServer.prototype.registerTool;
        vi.spyOn(McpServer.prototype, "registerTool").mockImplementation(function (this: McpServer, ...args: Parameters<typeof register>) {
          registered.push(String(args[0]));
          return register.apply(this, args);
        } as typeof register);
        models.play([{ text: "Two says hi." }]);
        const result = await client.callTool({ name: "ask_two", arguments: { query: "hi" } });
        expect(JSON.stringify(result.content)).toContain("Two says hi.");
        expect(registered).toEqual(["ask_two"]);
        const unknown = await client.callTool({ name: "ask_four", arguments: { query: "hi" } }).catch((error: unknown) => ({ error: String(error) }));
        expect(JSON.stringify(unknown)).toMatch(/ask_four/);
      } finally {
        await client.close();
      }
    });
  }
});
