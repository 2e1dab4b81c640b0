import { env, runInDurableObject } from "cloudflare:test";
import type { ModelMessage } from "ai";
import { describe, expect, it } from "vitest";
import { applySessionSchema } from "../../../src/experts/session/session-schema";
import { UnknownThreadError } from "../../../src/experts/runner-errors";
import { ThreadStore } from "../../../src/experts/session/thread-store";

function withStore<T>(name: string, use: (store: ThreadStore) => T): Promise<T> {
  const stub = env.EXPERT_SESSION.get(env.EXPERT_SESSION.idFromName(`thread-store:${name}`));
  return runInDurableObject(stub, (_instance, state) => {
    applySessionSchema(state.storage);
    return use(new ThreadStore(state.storage.sql));
  });
}

const turn = (i: number): ModelMessage[] => [
  { role: "user", content: `question ${i} ${"x".repeat(400)}` },
  { role: "assistant", content: [{ type: "tool-call", toolCallId: `c${i}`, toolName: "docs__search", input: { q: i } }] },
  { role: "tool", content: [{ type: "tool-result", toolCallId: `c${i}`, toolName: "docs__search", output: { type: "text", value: "y".repeat(400) } }] },
  { role: "assistant", content: `answer ${i}` },
];

describe("thread store", () => {
  it("keeps the newest turns within the token budget and always starts at a user turn", async () => {
    const history = await withStore("trim", (store) => {
      const id = store.create("expert", 1);
      for (let i = 0; i < 10; i++) store.append(id, turn(i), 2 + i, 600);
      return store.history(id);
    });
    expect(history[0]?.role).toBe("user");
    expect(JSON.stringify(history).length / 4).toBeLessThanOrEqual(600);
    expect(JSON.stringify(history)).toContain("answer 9");
    expect(JSON.stringify(history)).not.toContain("answer 0");
    // No tool result is left without the assistant call that produced it.
    const calls = history.flatMap((m) => (m.role === "assistant" && Array.isArray(m.content) ? m.content : []));
    const results = history.flatMap((m) => (m.role === "tool" ? m.content : []));
    expect(results.length).toBe(calls.length);
  });

  it("trims a new thread whose first turns alone exceed the budget", async () => {
    const history = await withStore("fresh-over-budget", (store) => {
      const id = store.create("expert", 1);
      store.append(id, [...turn(0), ...turn(1)], 2, 300);
      return store.history(id);
    });
    expect(history[0]?.role).toBe("user");
    expect(JSON.stringify(history)).toContain("answer 1");
    expect(JSON.stringify(history)).not.toContain("answer 0");
  });

  it("continues a thread's turn order across store instances (a restarted session)", async () => {
    const id = await withStore("restart", (store) => {
      const minted = store.create("expert", 1);
      store.append(minted, turn(0), 2);
      return minted;
    });
    const history = await withStore("restart", (store) => {
      store.append(id, turn(1), 3);
      return store.history(id);
    });
    expect(history.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "user", "assistant", "tool", "assistant"]);
    expect(JSON.stringify(history.at(-1))).toContain("answer 1");
  });

  it("refuses a handle it never minted", async () => {
    await expect(withStore("unknown", (store) => store.history("th_forged"))).rejects.toThrow(UnknownThreadError);
  });
});
