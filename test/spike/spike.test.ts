import { SELF } from "cloudflare:test";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";

describe("spike", () => {
  for (const mode of ["legacy", "auto"] as const) {
    it(`calls echo (${mode})`, async () => {
      const client = new Client({ name: "t", version: "0" }, { versionNegotiation: { mode } });
      const transport = new StreamableHTTPClientTransport(new URL("http://localhost/mcp"), {
        fetch: (input, init) => { const r = new Request(input, init); const h = new Headers(r.headers); h.set('host','localhost'); return SELF.fetch(new Request(r, { headers: h })); },
      });
      await client.connect(transport);
      const tools = await client.listTools();
      expect(tools.tools.map((t) => t.name)).toEqual(["echo"]);
      const r = await client.callTool({ name: "echo", arguments: { text: "hi" } });
      expect(r.content).toEqual([{ type: "text", text: "echo:hi" }]);
      const bad = await client.callTool({ name: "echo", arguments: { text: 5 } }).catch((e: unknown) => e);
      console.log(mode, JSON.stringify(bad));
      await client.close();
    });
  }
});
