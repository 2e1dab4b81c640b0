import { describe, expect, it } from "vitest";
import { indexRow, writeIndexRows } from "../admin/run-index-rows";
import { uniqueSkill } from "../support/catalog-test-data";
import { dashboardFetch, signInAs } from "./dashboard-test-client";

describe("/s/<skill>/admin deep links", () => {
  it.each([
    ["/s/docs/admin", "/admin?skill=docs"],
    ["/s/docs/admin/", "/admin?skill=docs"],
    ["/s/docs/admin/runs?outcome=error", "/admin/runs?outcome=error&skill=docs"],
    ["/s/docs/admin/live", "/admin/live?skill=docs"],
    ["/s/docs/admin/skills", "/admin/skills?skill=docs"],
    ["/s/docs/admin/servers", "/admin/servers?skill=docs#servers-docs"],
    ["/s/docs/admin/catalog", "/admin/catalog/docs"],
    ["/s/docs/admin/runs?skill=other", "/admin/runs?skill=docs"],
  ])("sends %s to %s without asking for a token (the page checks the session)", async (path, location) => {
    const response = await dashboardFetch(path);
    expect(response.status).toBe(302);
    expect(response.headers.get("location")).toBe(location);
  });

  it("leaves other /s/ paths to the OAuth provider: an unknown page, a bad skill name, a POST", async () => {
    for (const path of ["/s/docs/admin/constructor", "/s/docs/admin/nope", "/s/Not_A_Skill/admin", "/s/docs/administrator"]) {
      expect((await dashboardFetch(path)).status, path).toBe(401);
    }
    expect((await dashboardFetch("/s/docs/admin", { method: "POST" })).status).toBe(401);
  });

  it("shows the overview, skills, servers and live pages filtered to the skill", async () => {
    const skill = uniqueSkill("deep");
    const other = uniqueSkill("deep-other");
    const now = Date.now();
    await writeIndexRows([
      indexRow({ skill, expert: "ask", startedAt: now - 60_000, elapsedMs: 300, inputTokens: 1_000, outputTokens: 200 }),
      indexRow({ skill, expert: "ask", startedAt: now - 50_000, elapsedMs: 100, inputTokens: 10, outputTokens: 2, outcome: "error" }),
      indexRow({ skill: other, expert: "plan", startedAt: now - 40_000, elapsedMs: 5, inputTokens: 5, outputTokens: 5 }),
    ]);
    const cookie = await signInAs("alice");
    const overview = await (await dashboardFetch(`/admin?skill=${skill}`, { headers: { cookie } })).text();
    expect(overview).toContain(`<h1>Overview: ${skill}</h1>`);
    // Two runs of the skill, one not ok, 1,212 tokens; p50 of 100 and 300 ms is 100 (nearest rank).
    expect(overview).toMatch(/<div class="n">2<\/div><div class="l"><a href="\/admin\/runs\?since=7d&amp;skill=[^"]+">runs<\/a>/);
    expect(overview).toContain('<div class="n bad">1</div>');
    expect(overview).toContain('<div class="n">1212</div>');
    expect(overview).toContain('<div class="n">100 ms</div><div class="l">p50 latency (p95 300 ms)</div>');
    expect(overview).toContain(`${skill} / <code class="name">ask</code>`);
    expect(overview).not.toContain(other);
    for (const page of ["skills", "servers", "live"]) {
      const response = await dashboardFetch(`/admin/${page}?skill=${skill}`, { headers: { cookie } });
      expect(response.status, page).toBe(200);
      expect(await response.text(), page).toContain(`Only the skill <strong>${skill}</strong>`);
    }
  });
});
