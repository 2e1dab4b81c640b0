import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { LiveMessage } from "../../src/experts/live/live-events";
import { liveFeedStub } from "../../src/experts/live/live-run-feed";
import { waitFor } from "../support/wait-for";
import { indexRow, writeIndexRows } from "../admin/run-index-rows";
import { dashboardFetch, ORIGIN, oauthVars, signInAs } from "./dashboard-test-client";

const upgrade = (headers: Record<string, string> = {}): RequestInit => ({ headers: { upgrade: "websocket", ...headers } });

describe("live page and its WebSocket", () => {
  it("opens the feed's socket for an admin from the dashboard's own origin; the first message is the runs in flight", async () => {
    const cookie = await signInAs("alice");
    const response = await dashboardFetch("/admin/live/socket", upgrade({ cookie, origin: ORIGIN }));
    expect(response.status).toBe(101);
    const ws = response.webSocket;
    if (!ws) throw new Error("no WebSocket");
    const messages: LiveMessage[] = [];
    ws.addEventListener("message", (event) => {
      messages.push(JSON.parse(String(event.data)) as LiveMessage);
    });
    ws.accept();
    const snapshot = await waitFor("the snapshot", () => messages[0], 5_000);
    expect(snapshot.type).toBe("snapshot");
    ws.close(1000, "done");
  });

  it("refuses a signed-out browser, a member, another site's page (cross-site WebSocket hijacking) and a request without Origin", async () => {
    expect((await dashboardFetch("/admin/live/socket", upgrade({ origin: ORIGIN }))).status).toBe(401);
    const bob = await signInAs("bob");
    expect((await dashboardFetch("/admin/live/socket", upgrade({ cookie: bob, origin: ORIGIN }))).status).toBe(403);
    const alice = await signInAs("alice");
    const foreign = await dashboardFetch("/admin/live/socket", upgrade({ cookie: alice, origin: "https://evil.example" }));
    expect(foreign.status).toBe(403);
    expect(foreign.webSocket).toBeNull();
    expect((await dashboardFetch("/admin/live/socket", upgrade({ cookie: alice, origin: "http://127.0.0.1:9999" }))).status).toBe(403);
    expect((await dashboardFetch("/admin/live/socket", upgrade({ cookie: alice }))).status).toBe(403);
    expect((await dashboardFetch("/admin/live/socket", { headers: { cookie: alice, origin: ORIGIN } })).status).toBe(426);
  });

  it("under --no-auth (no cookie needed on loopback) still refuses another site's page, and opens for the dashboard's own", async () => {
    const noAuth = { AUTH: "none", ENVIRONMENT: "test" };
    expect((await dashboardFetch("/admin/live/socket", upgrade({ origin: "https://evil.example" }), noAuth)).status).toBe(403);
    const own = await dashboardFetch("/admin/live/socket", upgrade({ origin: ORIGIN }), noAuth);
    expect(own.status).toBe(101);
    own.webSocket?.accept();
    own.webSocket?.close(1000, "done");
  });

  it("takes the origin from PUBLIC_URL when set", async () => {
    // Signed in without it: the dev provider refuses a non-loopback PUBLIC_URL, the cookie is the same.
    const cookie = await signInAs("alice");
    const vars = { ...oauthVars, PUBLIC_URL: "https://slipsnisse.example.com" };
    const here = await dashboardFetch("/admin/live/socket", upgrade({ cookie, origin: ORIGIN }), vars);
    expect(here.status).toBe(403);
    const public_ = await dashboardFetch("/admin/live/socket", upgrade({ cookie, origin: "https://slipsnisse.example.com" }), vars);
    expect(public_.status).toBe(101);
    public_.webSocket?.accept();
    public_.webSocket?.close(1000, "done");
  });

  it("renders the runs in flight into the page (for a browser without JavaScript) under a CSP that lets the script reach only this origin", async () => {
    const runId = crypto.randomUUID();
    const at = Date.now();
    await liveFeedStub(env).publish([
      {
        type: "run-started",
        at,
        run: {
          runId,
          skill: "live-page",
          expert: "slow_<b>expert</b>",
          user: { id: "dev-carol", login: "carol" },
          startedAt: at,
          maxSteps: 5,
          step: 0,
          activity: "starting",
          updatedAt: at,
        },
      },
      { type: "run-step", at, runId, step: 2, maxSteps: 5, activity: "calling fx__echo" },
    ]);
    const cookie = await signInAs("alice");
    const page = await dashboardFetch("/admin/live", { headers: { cookie } });
    expect(page.status).toBe(200);
    const text = await page.text();
    expect(text).toContain(`<tr data-run="${runId}">`);
    expect(text).toContain("slow_&lt;b&gt;expert&lt;/b&gt;");
    expect(text).toContain("step 2 of 5");
    expect(text).toContain('<a href="/admin/live">Refresh</a>');
    expect(page.headers.get("content-security-policy")).toMatch(/script-src 'nonce-[^']+'; connect-src 'self';/);
    await liveFeedStub(env).publish([
      {
        type: "run-ended",
        at,
        runId,
        skill: "live-page",
        expert: "slow",
        user: { id: "dev-carol", login: "carol" },
        outcome: "ok",
        steps: 2,
        toolCalls: 1,
        inputTokens: 1,
        outputTokens: 1,
        elapsedMs: 1,
        tools: [],
      },
    ]);
    const after = await (await dashboardFetch("/admin/live", { headers: { cookie } })).text();
    // Ended, the run leaves the runs in flight and is listed among the recently finished, with its trace's link.
    expect(tbody(after, "live-in-flight")).not.toContain(runId);
    expect(tbody(after, "live-runs")).toContain(`<a href="/admin/runs/${runId}" aria-label="Run ${runId}">`);
  });

  it("says what a run waits on and since when, and what the empty tables would show; a fresh load lists the runs that ended", async () => {
    const cookie = await signInAs("alice");
    const skill = `waits-${crypto.randomUUID().slice(0, 8)}`;
    const empty = await (await dashboardFetch(`/admin/live?skill=${skill}`, { headers: { cookie } })).text();
    expect(tbody(empty, "live-in-flight")).toContain("No run in flight. A run appears here when someone calls an expert");
    expect(tbody(empty, "live-runs")).toContain("No run ended in the last 15 minutes.");

    const runId = crypto.randomUUID();
    const at = Date.now() - 12_000;
    await liveFeedStub(env).publish([
      {
        type: "run-started",
        at,
        run: {
          runId,
          skill,
          expert: "slow",
          user: { id: "dev-carol", login: "carol" },
          startedAt: at,
          maxSteps: 5,
          step: 0,
          activity: "starting",
          updatedAt: at,
        },
      },
      { type: "run-step", at, runId, step: 1, maxSteps: 5, activity: "calling fx__echo" },
      { type: "run-waiting", at, runId, waiting: { on: "tool", name: "fx__echo", since: at } },
    ]);
    const waiting = tbody(await (await dashboardFetch(`/admin/live?skill=${skill}`, { headers: { cookie } })).text(), "live-in-flight");
    expect(waiting).toMatch(new RegExp(`waiting on fx__echo <span class="muted" data-since="${at}">for 1[2-9] s</span>`));
    expect(waiting).not.toContain("No run in flight");

    await liveFeedStub(env).publish([{ type: "run-waiting", at: at + 1, runId, waiting: { on: "approval", name: "fx__delete", since: at + 1 } }]);
    expect(await (await dashboardFetch(`/admin/live?skill=${skill}`, { headers: { cookie } })).text()).toContain("waiting on an approval of fx__delete");

    await liveFeedStub(env).publish([
      {
        type: "run-ended",
        at: at + 2,
        runId,
        skill,
        expert: "slow",
        user: { id: "dev-carol", login: "carol" },
        outcome: "budget_exhausted",
        steps: 5,
        toolCalls: 4,
        inputTokens: 100,
        outputTokens: 20,
        elapsedMs: 2,
        tools: [{ name: "fx__echo", status: "ok" }],
      },
    ]);
    const fresh = await (await dashboardFetch(`/admin/live?skill=${skill}`, { headers: { cookie } })).text();
    expect(tbody(fresh, "live-in-flight")).toContain("No run in flight.");
    const finished = tbody(fresh, "live-runs");
    expect(finished).toContain(`<tr data-run="${runId}"`);
    expect(finished).toContain('<td class="warn">budget_exhausted</td>');
    expect(finished).toContain("fx__echo ok");
    expect(finished).not.toContain("No run ended");
  });

  it("on a fresh load lists the runs that ended while no page watched, from the run index: the last 15 minutes, one row a run", async () => {
    const cookie = await signInAs("alice");
    const skill = `unwatched-${crypto.randomUUID().slice(0, 8)}`;
    const now = Date.now();
    const lately = indexRow({ skill, startedAt: now - 40_000, endedAt: now - 30_000, outcome: "interrupted", userLogin: "dora" });
    const long_ago = indexRow({ skill, startedAt: now - 20 * 60_000, endedAt: now - 20 * 60_000 + 100 });
    await writeIndexRows([lately, long_ago], (row) =>
      row === lately
        ? [{ toolCallId: "a", name: "docs__search", server: "docs", tool: "search", status: "error", bytes: 0, elapsedMs: 40, error: "HTTP 502" }]
        : [],
    );
    // The same run also in the feed (a page watched its end): listed once.
    const both = indexRow({ skill, startedAt: now - 9_000, endedAt: now - 8_000, userLogin: "erik" });
    await writeIndexRows([both]);
    await liveFeedStub(env).publish([
      {
        type: "run-ended",
        at: both.endedAt,
        runId: both.runId,
        skill,
        expert: both.expert,
        user: { id: both.userId, login: "erik" },
        outcome: "ok",
        steps: 1,
        toolCalls: 0,
        inputTokens: 0,
        outputTokens: 0,
        elapsedMs: 1_000,
        tools: [],
      },
    ]);
    const finished = tbody(await (await dashboardFetch(`/admin/live?skill=${skill}`, { headers: { cookie } })).text(), "live-runs");
    expect(finished.match(/<tr data-run="/g)).toHaveLength(2);
    expect(finished.indexOf(both.runId)).toBeLessThan(finished.indexOf(lately.runId));
    expect(finished).toContain(`<tr data-run="${lately.runId}"`);
    expect(finished).toContain("dora");
    expect(finished).toContain("docs__search error");
    expect(finished).toContain('<td class="warn">interrupted</td>');
    expect(finished).not.toContain(long_ago.runId);
  });
});

/** The markup of one table body of the page. */
function tbody(page: string, id: string): string {
  const start = page.indexOf(`<tbody id="${id}"`);
  return page.slice(start, page.indexOf("</tbody>", start));
}
