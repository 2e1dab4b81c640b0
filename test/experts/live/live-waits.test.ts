import { generateText } from "ai";
import { describe, expect, it } from "vitest";
import type { ToolSource } from "../../../src/downstream/downstream-types";
import type { LiveWait } from "../../../src/experts/live/live-events";
import { RunWaits } from "../../../src/experts/live/live-waits";
import { scriptedModel } from "../../support/workers/scripted-model";

/** A promise with its resolver, to hold a call open while the test looks at the waits. */
function held<T>(): { promise: Promise<T>; resolve(value: T): void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

const shown = (reports: (LiveWait | null)[]) => reports.map((wait) => (wait === null ? "none" : `${wait.on}${wait.name ? ` ${wait.name}` : ""}`));

describe("RunWaits", () => {
  it("reports each wait as it begins and ends: servers listing their tools, tools (parallel calls together, since the first began), approvals first; names only", async () => {
    const reports: (LiveWait | null)[] = [];
    const waits = new RunWaits((wait) => reports.push(wait));
    const calls = new Map<string, ReturnType<typeof held<{ content: [] }>>>();
    const listing = held<[]>();
    const source: ToolSource = {
      skill: "docs",
      listTools: () => listing.promise,
      callTool: (_server, tool) => {
        const call = held<{ content: [] }>();
        calls.set(tool, call);
        return call.promise;
      },
    };
    const tools = waits.tools(source);
    expect(tools.skill).toBe("docs");

    const listed = tools.listTools("fx");
    expect(shown(reports)).toEqual(["server fx"]);
    listing.resolve([]);
    await listed;
    expect(shown(reports)).toEqual(["server fx", "none"]);

    const before = Date.now();
    const echo = tools.callTool("fx", "echo", { text: "the-secret-argument" });
    const search = tools.callTool("fx", "search", { q: "another-argument" });
    expect(shown(reports).slice(2)).toEqual(["tool fx__echo", "tool fx__echo, fx__search"]);
    expect(reports.at(-1)?.since).toBeGreaterThanOrEqual(before);
    expect(reports.at(-1)?.since).toBe(reports.at(-2)?.since);

    // An approval asked while a call is open is what the run is held up by.
    const approval = held<{ action: "accept"; approve: boolean }>();
    const ask = waits.prompter(() => approval.promise);
    const asked = ask({ kind: "approval", message: "Delete?", server: "fx", tool: "delete", arguments: '{"id":"the-secret-id"}' });
    expect(shown(reports).at(-1)).toBe("approval fx__delete");
    approval.resolve({ action: "accept", approve: true });
    await asked;
    expect(shown(reports).at(-1)).toBe("tool fx__echo, fx__search");

    calls.get("echo")?.resolve({ content: [] });
    await echo;
    expect(shown(reports).at(-1)).toBe("tool fx__search");
    calls.get("search")?.resolve({ content: [] });
    await search;
    expect(shown(reports).at(-1)).toBe("none");
    expect(JSON.stringify(reports)).not.toMatch(/secret|another-argument|Delete\?/);
  });

  it("reports the model's wait while its call is open, and nothing once it answered", async () => {
    const reports: (LiveWait | null)[] = [];
    const waits = new RunWaits((wait) => reports.push(wait));
    const model = waits.model(scriptedModel([{ text: "the answer", outputTokens: 2 }]));
    const result = await generateText({ model, prompt: "the question" });
    expect(result.text).toBe("the answer");
    expect(shown(reports)).toEqual(["model", "none"]);
  });

  it("never lets a failing feed into the run", async () => {
    const waits = new RunWaits(() => {
      throw new Error("feed gone");
    });
    await expect(waits.during({ on: "model" }, async () => 42)).resolves.toBe(42);
  });
});
