import { beforeAll, describe, expect, it } from "vitest";
import type { RunIndexRow } from "../../src/experts/records/run-index-writer";
import { admin } from "./admin-test-client";
import { indexRow, writeIndexRows } from "./run-index-rows";

const T0 = Date.UTC(2026, 10, 20, 12, 0, 0);
const MIN = 60_000;

describe("admin run index", () => {
  const rows: RunIndexRow[] = [
    indexRow({ skill: "idx-a", expert: "ask", userId: "gh:1", userLogin: "alice", userEmail: "alice@example.com", outcome: "ok", startedAt: T0 }),
    indexRow({ skill: "idx-a", expert: "ask", userId: "gh:2", userLogin: "bob", outcome: "error", startedAt: T0 + MIN }),
    indexRow({ skill: "idx-a", expert: "plan", userId: "gh:1", userLogin: "alice", outcome: "budget_exhausted", startedAt: T0 + 2 * MIN }),
    // Two runs that started in the same millisecond: the cursor must neither skip nor repeat one.
    indexRow({ skill: "idx-b", expert: "ask", userId: "gh:2", userLogin: "bob", outcome: "ok", startedAt: T0 + 3 * MIN }),
    indexRow({ skill: "idx-b", expert: "ask", userId: "gh:1", userLogin: "alice", outcome: "cancelled", startedAt: T0 + 3 * MIN }),
  ];
  const range = `from=${T0}&to=${T0 + 10 * MIN}`;
  const ids = (body: Record<string, unknown>) => (body.runs as Array<{ id: string }>).map((run) => run.id);
  const newestFirst = [...rows].sort((a, b) => b.startedAt - a.startedAt || (a.runId < b.runId ? 1 : -1)).map((row) => row.runId);

  beforeAll(async () => {
    await writeIndexRows(rows);
  });

  it("lists every user's runs newest first, with the sign-in display name", async () => {
    const answer = await admin("GET", `/runs?${range}`);
    expect(answer.status).toBe(200);
    expect(ids(answer.body)).toEqual(newestFirst);
    const first = (answer.body.runs as Array<Record<string, unknown>>).find((run) => run.id === rows[0]?.runId);
    expect(first).toMatchObject({ skill: "idx-a", expert: "ask", user: { id: "gh:1", login: "alice", email: "alice@example.com" }, outcome: "ok" });
    expect(answer.body.next_cursor).toBeNull();
  });

  it.each([
    ["skill", "skill=idx-b", [3, 4]],
    ["expert", "expert=plan", [2]],
    ["user", "user=gh:2", [1, 3]],
    ["outcome", "outcome=error", [1]],
    ["from (inclusive)", `from=${T0 + MIN}&to=${T0 + 2 * MIN}`, [1]],
    ["several at once", "skill=idx-a&user=gh:1", [0, 2]],
  ])("filters by %s", async (_label, query, expected) => {
    const answer = await admin("GET", `/runs?${query.startsWith("from=") ? query : `${range}&${query}`}`);
    expect(answer.status).toBe(200);
    expect(new Set(ids(answer.body))).toEqual(new Set(expected.map((index) => rows[index]?.runId)));
  });

  it("pages with a cursor through runs that started in the same millisecond", async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 5; page++) {
      const answer = await admin("GET", `/runs?${range}&limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      expect(answer.status).toBe(200);
      seen.push(...ids(answer.body));
      cursor = answer.body.next_cursor as string | null;
      if (cursor === null) break;
    }
    expect(seen).toEqual(newestFirst);
  });

  it("answers 404 for the runs of a skill the catalog does not have, index rows or not", async () => {
    const answer = await admin("GET", `/skills/idx-b/runs?${range}`);
    expect(answer.status).toBe(404);
  });

  it.each([
    ["an unknown outcome", "outcome=great", /outcome/, /one of ok, budget_exhausted/],
    ["a cursor it did not return", "cursor=bm90LWEtY3Vyc29y", /cursor/, /next_cursor/],
    ["an unreadable time", "from=yesterday", /from/, /ISO 8601/],
    ["a limit over 200", "limit=500", /limit/, /1 to 200/],
    ["a bad skill name", "skill=Bad_Name", /skill/, /GET \/admin\/api\/skills/],
  ])("refuses %s with the parameter and a fix", async (_label, query, error, fix) => {
    const answer = await admin("GET", `/runs?${query}`);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatch(error);
    expect(answer.body.fix).toMatch(fix);
  });

  it("answers 404 with a fix for a run that is not indexed, 400 for a non-UUID", async () => {
    const missing = await admin("GET", `/runs/${crypto.randomUUID()}`);
    expect(missing.status).toBe(404);
    expect(missing.body.fix).toMatch(/GET \/admin\/api\/runs/);
    expect((await admin("GET", "/runs/not-a-run")).status).toBe(400);
  });
});
