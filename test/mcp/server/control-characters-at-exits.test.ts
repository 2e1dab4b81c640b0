import { Client, SSEClientTransport, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { DedupeInboundTransport } from "../../../src/downstream/dedupe-inbound-transport";
import { META_QUESTION } from "../../../src/mcp/delivery/expert-tool-result";
import { writeIndexRows, indexRow } from "../../admin/run-index-rows";
import { dashboardFetch } from "../../dashboard/dashboard-test-client";
import { uniqueSkill } from "../../support/catalog-test-data";
import { useCatalogWithScriptedModels } from "../../support/workers/scripted-model";
import { askDocsCatalog, textOf } from "../expert-test-setup";
import { connectClient, selfFetch } from "../mcp-test-client";

const SKILL = "default";
/** An OSC 8 hyperlink, an OSC 52 clipboard write, SGR colours, a C1 CSI, a carriage return, NUL, BEL and DEL. */
const ESCAPED = "a\x1b]8;;https://evil.example\x07link\x1b]8;;\x07 \x1b]52;c;ZXZpbA==\x07\x1b[1;31mred\x1b[0m \x9b2Jc1\rover\x00\x07\x7f\tz\nend";
const CLEAN = "alink red c1over\tz\nend";

function catalog() {
  const value = askDocsCatalog(SKILL);
  const expert = value.skills[SKILL]?.experts[0];
  if (!expert) throw new Error("askDocsCatalog changed shape");
  Object.assign(expert, { ask_back: true });
  return value;
}

/** C0 but tab and line feed, DEL and C1, as code points. */
function controlCharacters(text: string): number[] {
  return Array.from(text, (char) => char.codePointAt(0) ?? 0).filter(
    (code) => (code < 0x20 && code !== 0x09 && code !== 0x0a) || (code >= 0x7f && code <= 0x9f),
  );
}

describe("text from models and servers loses its control characters where it leaves", () => {
  const models = useCatalogWithScriptedModels(catalog());

  it("an expert's answer reaches the orchestrator without escape sequences, keeping tabs and line feeds", async () => {
    const client = await connectClient("/mcp", "2026");
    try {
      models.play([{ text: ESCAPED }]);
      const text = textOf(await client.callTool({ name: "ask_docs", arguments: { query: "q" } }));
      expect(controlCharacters(text)).toEqual([]);
      expect(text).toContain(CLEAN);
    } finally {
      await client.close();
    }
  });

  it("a paused run's question, in the text and in _meta", async () => {
    const client = await connectClient("/mcp", "2025");
    try {
      models.play([{ calls: [{ name: "ask_orchestrator", input: { question: ESCAPED } }] }]);
      const paused = await client.callTool({ name: "ask_docs", arguments: { query: "q" } });
      const question = paused._meta?.[META_QUESTION] as { question: string };
      expect(controlCharacters(textOf(paused))).toEqual([]);
      expect(textOf(paused)).toContain(CLEAN);
      expect(question.question).toBe(CLEAN);
    } finally {
      await client.close();
    }
  });

  for (const era of ["2026", "sse"] as const) {
    it(`a question put to the user through elicitation (${era === "sse" ? "legacy SSE, mid-call" : "2026-07-28, input_required"})`, async () => {
      const shown: string[] = [];
      const client = new Client(
        { name: "elicit-ctl", version: "0.0.0" },
        { capabilities: { elicitation: { form: {} } }, ...(era === "2026" ? { versionNegotiation: { mode: { pin: "2026-07-28" as const } } } : {}) },
      );
      client.setRequestHandler("elicitation/create", async (request) => {
        shown.push(request.params.message);
        return { action: "accept", content: { answer: "blue" } };
      });
      const url = new URL(era === "sse" ? "http://localhost/sse" : "http://localhost/mcp");
      await client.connect(
        era === "sse"
          ? new DedupeInboundTransport(new SSEClientTransport(url, { fetch: selfFetch }))
          : new StreamableHTTPClientTransport(url, { fetch: selfFetch }),
      );
      try {
        models.play([{ calls: [{ name: "ask_user", input: { question: ESCAPED } }] }, { text: "Done." }]);
        await client.callTool({ name: "ask_docs", arguments: { query: "q" } });
        expect(shown).toHaveLength(1);
        expect(controlCharacters(shown[0] ?? "")).toEqual([]);
        expect(shown[0]).toContain(CLEAN);
      } finally {
        await client.close();
      }
    });
  }

  it("a failed run's error text", async () => {
    const client = await connectClient("/mcp", "2026");
    try {
      models.play([
        () => {
          throw new Error(`upstream said ${ESCAPED}`);
        },
      ]);
      const result = await client.callTool({ name: "ask_docs", arguments: { query: "q" } });
      expect(result.isError).toBe(true);
      expect(controlCharacters(textOf(result))).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it("the dashboard's pages", async () => {
    const skill = uniqueSkill("ctl-chars");
    await writeIndexRows([indexRow({ skill, startedAt: Date.now(), userLogin: ESCAPED, expert: "ask_docs" })]);
    const response = await dashboardFetch(`/admin/runs?skill=${skill}`, {}, { AUTH: "none", ENVIRONMENT: "test" });
    expect(response.status).toBe(200);
    const page = await response.text();
    expect(controlCharacters(page)).toEqual([]);
    expect(page).toContain("alink red c1over\tz");
  });
});
