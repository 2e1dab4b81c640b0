import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import type { RunIndexRow } from "../../src/experts/records/run-index-writer";
import { admin } from "./admin-test-client";
import { indexRow, writeIndexRows } from "./run-index-rows";

const DAY1 = Date.UTC(2026, 9, 1, 10, 0, 0);
const DAY2 = Date.UTC(2026, 9, 2, 10, 0, 0);
const range = `from=2026-10-01&to=2026-10-03`;

describe("admin usage", () => {
  // Twenty runs of one expert on day 1 with latencies 100, 200, ..., 2000 ms: nearest-rank p50 is
  // the 10th value (1000), p95 the 19th (1900). Priced at 0.3 in / 2.5 out per million tokens.
  const priced = Array.from({ length: 20 }, (_, i) =>
    indexRow({
      skill: "usage-a",
      expert: "ask",
      userId: i % 2 === 0 ? "gh:1" : "gh:2",
      userLogin: i % 2 === 0 ? "alice" : "bob",
      startedAt: DAY1 + i * 1000,
      elapsedMs: (i + 1) * 100,
      outcome: i === 0 ? "error" : "ok",
      inputTokens: 1_000,
      outputTokens: 200,
      toolCalls: 2,
      downstreamBytes: 500,
      cost: (1_000 * 0.3 + 200 * 2.5) / 1_000_000,
    }),
  );
  // Day 2: an expert whose model the catalog does not price: tokens only, cost null.
  const unpriced: RunIndexRow[] = [
    indexRow({ skill: "usage-a", expert: "plan", startedAt: DAY2, elapsedMs: 50, inputTokens: 10, outputTokens: 5, cost: null }),
    indexRow({ skill: "usage-a", expert: "plan", startedAt: DAY2 + 1, elapsedMs: 70, inputTokens: 30, outputTokens: 15, cost: null }),
  ];

  beforeAll(async () => {
    await writeIndexRows([...priced, ...unpriced]);
  });

  it("adds up runs, outcomes, tokens, tool calls, bytes, p50/p95 latency and cost per expert and day", async () => {
    const answer = await admin("GET", `/usage?${range}&skill=usage-a&group_by=expert,day`);
    expect(answer.status).toBe(200);
    expect(answer.body.groups).toEqual([
      {
        expert: "ask",
        day: "2026-10-01",
        runs: 20,
        outcomes: { error: 1, ok: 19 },
        inputTokens: 20_000,
        outputTokens: 4_000,
        toolCalls: 40,
        downstreamBytes: 10_000,
        latencyMs: { p50: 1000, p95: 1900 },
        cost: 0.016,
        pricedRuns: 20,
        unpricedRuns: 0,
      },
      {
        expert: "plan",
        day: "2026-10-02",
        runs: 2,
        outcomes: { ok: 2 },
        inputTokens: 40,
        outputTokens: 20,
        toolCalls: 0,
        downstreamBytes: 0,
        latencyMs: { p50: 50, p95: 70 },
        cost: null,
        pricedRuns: 0,
        unpricedRuns: 2,
      },
    ]);
  });

  it("groups by user with the display name, within the time range", async () => {
    const answer = await admin("GET", `/usage?from=${DAY1}&to=${DAY2}&skill=usage-a&group_by=user`);
    const groups = answer.body.groups as Array<{ user: { id: string; login: string }; runs: number; latencyMs: { p50: number } }>;
    expect(groups.map((group) => [group.user.id, group.user.login, group.runs])).toEqual([
      ["gh:1", "alice", 10],
      ["gh:2", "bob", 10],
    ]);
    // alice's runs are 100, 300, ..., 1900 ms: the 5th of 10 is 900.
    expect(groups[0]?.latencyMs.p50).toBe(900);
  });

  it.each([
    ["an unknown dimension", "group_by=skill,colour", /group_by/],
    ["an unreadable time", "to=tomorrow", /to/],
  ])("refuses %s", async (_label, query, message) => {
    const answer = await admin("GET", `/usage?${query}`);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatch(message);
    expect(answer.body.fix).toEqual(expect.any(String));
  });

  it("reports each downstream server's calls, errors, latency and last error over the last hour and day", async () => {
    const now = Date.now();
    const recent = indexRow({ skill: "usage-srv", startedAt: now - 10 * 60_000, endedAt: now - 10 * 60_000 });
    const older = indexRow({ skill: "usage-srv", startedAt: now - 5 * 3_600_000, endedAt: now - 5 * 3_600_000 });
    const ancient = indexRow({ skill: "usage-srv", startedAt: now - 30 * 3_600_000, endedAt: now - 30 * 3_600_000 });
    await writeIndexRows([recent, older, ancient], (row) =>
      row === recent
        ? [
            { toolCallId: "a", name: "docs__search", server: "docs", tool: "search", status: "ok", bytes: 10, elapsedMs: 40 },
            { toolCallId: "b", name: "docs__search", server: "docs", tool: "search", status: "error", bytes: 0, elapsedMs: 60, error: "HTTP 502 from docs" },
            { toolCallId: "c", name: "docs__drop", server: "docs", tool: "drop", status: "refused", bytes: 0, elapsedMs: 0, error: "blocked" },
          ]
        : row === older
          ? [
              { toolCallId: "d", name: "docs__read", server: "docs", tool: "read", status: "error", bytes: 0, elapsedMs: 20, error: "older failure" },
              { toolCallId: "e", name: "web__get", server: "web", tool: "get", status: "ok", bytes: 5, elapsedMs: 300 },
            ]
          : [{ toolCallId: "f", name: "docs__read", server: "docs", tool: "read", status: "error", bytes: 0, elapsedMs: 999, error: "too old" }],
    );
    const answer = await admin("GET", "/servers/usage?skill=usage-srv");
    expect(answer.status).toBe(200);
    expect(answer.body.servers).toEqual([
      {
        skill: "usage-srv",
        server: "docs",
        lastHour: { calls: 2, errors: 1, latencyMs: { p50: 40, p95: 60 }, lastError: { at: recent.endedAt, message: "HTTP 502 from docs" } },
        lastDay: { calls: 3, errors: 2, latencyMs: { p50: 40, p95: 60 }, lastError: { at: recent.endedAt, message: "HTTP 502 from docs" } },
      },
      {
        skill: "usage-srv",
        server: "web",
        lastHour: { calls: 0, errors: 0, latencyMs: { p50: null, p95: null }, lastError: null },
        lastDay: { calls: 1, errors: 0, latencyMs: { p50: 300, p95: 300 }, lastError: null },
      },
    ]);
    expect(JSON.stringify(await env.DB.prepare("SELECT error FROM run_tool_calls WHERE skill = 'usage-srv'").all())).not.toContain("blocked");
  });
});
