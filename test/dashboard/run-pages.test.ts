import { describe, expect, it } from "vitest";
import type { RecordedOutcome } from "../../src/experts/core/run-types";
import { uniqueSkill } from "../support/catalog-test-data";
import { indexRow, writeIndexRows } from "../admin/run-index-rows";
import { dashboardFetch } from "./dashboard-test-client";

const NO_AUTH = { AUTH: "none", ENVIRONMENT: "test" };

async function page(path: string): Promise<{ status: number; text: string }> {
  const response = await dashboardFetch(path, {}, NO_AUTH);
  return { status: response.status, text: await response.text() };
}

describe("runs pages", () => {
  it("lists a skill's runs newest first with filters, and pages with a cursor link", async () => {
    const skill = uniqueSkill("runs-page");
    const now = Date.now();
    const rows = Array.from({ length: 55 }, (_, index) =>
      indexRow({
        skill,
        startedAt: now - index * 1_000,
        expert: index % 2 === 0 ? "even_expert" : "odd_expert",
        outcome: index === 3 ? "error" : "ok",
        userLogin: `user-${index}`,
      }),
    );
    await writeIndexRows(rows);
    const first = await page(`/admin/runs?skill=${skill}`);
    expect(first.status).toBe(200);
    const ids = [...first.text.matchAll(/aria-label="Run ([0-9a-f-]{36})"/g)].map((match) => match[1]);
    expect(ids).toEqual(rows.slice(0, 50).map((row) => row.runId));
    const next = /href="(\/admin\/runs\?[^"]+)" rel="next"/.exec(first.text)?.[1]?.replaceAll("&amp;", "&");
    expect(next).toContain(`skill=${skill}`);
    const second = await page(next ?? "");
    expect([...second.text.matchAll(/aria-label="Run ([0-9a-f-]{36})"/g)].map((match) => match[1])).toEqual(rows.slice(50).map((row) => row.runId));
    expect(second.text).not.toContain('rel="next"');

    const errors = await page(`/admin/runs?skill=${skill}&outcome=error`);
    expect([...errors.text.matchAll(/aria-label="Run ([0-9a-f-]{36})"/g)].map((match) => match[1])).toEqual([rows[3]?.runId]);
    const odd = await page(`/admin/runs?skill=${skill}&expert=odd_expert`);
    expect([...odd.text.matchAll(/aria-label="Run /g)]).toHaveLength(27);
  });

  it("answers a filter it cannot read with a page naming it", async () => {
    const response = await page("/admin/runs?outcome=exploded");
    expect(response.status).toBe(400);
    expect(response.text).toContain("outcome");
  });

  it("answers 404 for a run the index does not hold", async () => {
    expect((await page(`/admin/runs/${crypto.randomUUID()}`)).status).toBe(404);
    expect((await page("/admin/runs/not-a-uuid")).status).toBe(404);
  });

  it("escapes what a run row carries (a login with markup)", async () => {
    const skill = uniqueSkill("runs-escape");
    await writeIndexRows([indexRow({ skill, startedAt: Date.now(), userLogin: "<img src=x onerror=alert(1)>" })]);
    const response = await page(`/admin/runs?skill=${skill}`);
    expect(response.text).toContain("&lt;img src=x onerror=alert(1)&gt;");
    expect(response.text).not.toContain("<img src=x");
  });

  it("shows today's runs, errors and tokens on the overview, with the runs-per-day chart", async () => {
    const skill = uniqueSkill("overview");
    await writeIndexRows([
      indexRow({ skill, startedAt: Date.now(), expert: "busy_expert", inputTokens: 1_000, outputTokens: 200, outcome: "error" }),
      indexRow({ skill, startedAt: Date.now(), expert: "busy_expert" }),
    ]);
    const response = await page("/admin");
    expect(response.status).toBe(200);
    expect(response.text).toContain(`${skill} / <code class="name">busy_expert</code>`);
    expect(response.text).toMatch(/role="img" aria-label="Runs per day\. /);
  });

  it("counts errors, budget stops, cancels and pauses in columns of their own on the overview", async () => {
    const skill = uniqueSkill("overview-outcomes");
    const now = Date.now();
    const outcomes: RecordedOutcome[] = [
      "ok",
      "error",
      "interrupted",
      "budget_exhausted",
      "budget_exhausted",
      "budget_exhausted",
      "cancelled",
      "paused",
      "paused",
    ];
    await writeIndexRows(outcomes.map((outcome, index) => indexRow({ skill, startedAt: now - index, expert: "mixed_expert", outcome })));
    const response = await page("/admin");
    const row = new RegExp(`<tr><td><a href="[^"]*">${skill} / <code class="name">mixed_expert</code></a></td>(.*?)</tr>`).exec(response.text)?.[1] ?? "";
    expect(response.text).toContain('<th scope="col">Errors</th><th scope="col">Budget stops</th><th scope="col">Cancels</th><th scope="col">Pauses</th>');
    const cells = [...row.matchAll(/<td[^>]*>(?:<a [^>]*>)?([^<]*)/g)].map((match) => match[1]);
    expect(cells.slice(0, 5)).toEqual(["9", "2", "3", "1", "2"]);
    expect(row).toContain(`outcome=budget_exhausted">3</a>`);
  });
});
