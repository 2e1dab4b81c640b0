import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { saveSkill } from "../../src/catalog/catalog-store";
import { skillSchema } from "../../src/catalog/catalog-schema";
import { LimitCounters } from "../../src/experts/limits/limit-counters";
import { skillLimiterStub } from "../../src/experts/limits/skill-limiter";
import { skillSubject, userSubject, utcDay, writeCounters } from "../../src/experts/limits/usage-counters";
import { sessionStub } from "../../src/experts/session/session-name";
import { uniqueSkill } from "../support/catalog-test-data";
import { dashboardFetch } from "./dashboard-test-client";

describe("skills page", () => {
  it("shows today's usage against a skill's limits, per skill and per user", async () => {
    const skill = uniqueSkill("limited");
    const config = skillSchema.parse({ limits: { per_user: { runs_per_day: 5 }, per_skill: { runs_in_flight: 1 } } });
    await saveSkill(env.DB, skill, config, { author: "seed" });
    // One run of dev-bob in flight, as the objects that own the counters hold it (the page asks
    // them, live-usage.ts), and as they copy it to D1 (which lists dev-bob).
    const now = Date.now();
    const day = utcDay(now);
    const runId = crypto.randomUUID();
    await runInDurableObject(sessionStub(env, skill, "dev-bob"), (_instance, state) => {
      const subject = { scope: "per_user" as const, key: userSubject(skill, "dev-bob"), limits: config.limits?.per_user ?? {} };
      expect(new LimitCounters(state.storage.sql).reserve(runId, subject, day, now)).toBeNull();
    });
    expect(await skillLimiterStub(env, skill).reserve(runId, skill, config.limits?.per_skill ?? {}, day, now)).toBeNull();
    const counted = { day, runs: 1, tokens: 0, cost_usd: 0, in_flight: 1, updated_at: now };
    await writeCounters(env.DB, [
      { subject: userSubject(skill, "dev-bob"), ...counted },
      { subject: skillSubject(skill), ...counted },
    ]);
    const page = await (await dashboardFetch("/admin/skills", {}, { AUTH: "none", ENVIRONMENT: "test" })).text();
    const section = page.slice(page.indexOf(`id="skill-${skill}"`));
    expect(section).toMatch(/<td>whole skill<\/td><td>1 <span class="muted">\(no limit\)<\/span><\/td>.*<span class="bad">1 of 1<\/span>/s);
    expect(section).toMatch(/<td>dev-bob<\/td><td><span>1 of 5<\/span><\/td>/);
  });

  it("says no limits are set, and how to set one, instead of a table of headers", async () => {
    // `per_user: {}` names the section but sets no limit; the table had headers and no row.
    const skill = uniqueSkill("unlimited");
    await saveSkill(env.DB, skill, skillSchema.parse({ limits: { per_user: {} } }), { author: "seed" });
    const page = await (await dashboardFetch("/admin/skills", {}, { AUTH: "none", ENVIRONMENT: "test" })).text();
    const section = page.slice(page.indexOf(`id="skill-${skill}"`), page.indexOf("</section>", page.indexOf(`id="skill-${skill}"`)));
    expect(section).toContain("<strong>No limits set</strong>");
    expect(section).toContain(`<code>skills.${skill}.limits</code>`);
    expect(section).not.toContain("Usage against limits today");
    expect(section).not.toContain('<th scope="col">In flight</th>');
  });

  it("shows which calls need approval beside allowed and blocked, and never breaks a long name inside it", async () => {
    const skill = uniqueSkill("approvals");
    const expert = "summarise_every_quarterly_compliance_report_for_the_board";
    const config = skillSchema.parse({
      servers: { billing_ledger: { url: "https://ledger.example/mcp" } },
      tool_policy: { blocked: ["*__drop*"], requires_approval: ["billing_ledger__refund*", "*__<b>x</b>"], approve_destructive: false },
      experts: [{ name: expert, description: "d", internal_tools: { billing_ledger: ["refund_customer_invoice"] } }],
    });
    await saveSkill(env.DB, skill, config, { author: "seed" });
    const page = await (await dashboardFetch("/admin/skills", {}, { AUTH: "none", ENVIRONMENT: "test" })).text();
    const section = page.slice(page.indexOf(`id="skill-${skill}"`));
    expect(section).toContain(
      "blocked <code>*__drop*</code>; needs approval: <code>billing_ledger__refund*, *__&lt;b&gt;x&lt;/b&gt;</code>, not destructive tools as such (approve_destructive: false)",
    );
    // A name is one word to its reader (no "refund_ customer_ invoice"): no break opportunity inside it.
    expect(section).toContain(`<code class="name">${expert}</code>`);
    expect(section).toContain('<code class="name">billing_ledger</code>: <span class="name">refund_customer_invoice</span>');

    const other = uniqueSkill("destructive");
    await saveSkill(env.DB, other, skillSchema.parse({}), { author: "seed" });
    const again = await (await dashboardFetch("/admin/skills", {}, { AUTH: "none", ENVIRONMENT: "test" })).text();
    expect(again.slice(again.indexOf(`id="skill-${other}"`))).toContain(
      "needs approval: no pattern, and every tool its server marks destructive (destructiveHint)",
    );
  });
});
