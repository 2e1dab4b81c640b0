import { createExecutionContext, env, runDurableObjectAlarm, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import type { UserProps } from "../../src/auth/user-props";
import { contextWithProps } from "../../src/execution-context";
import { skillLimiterStub } from "../../src/experts/limits/skill-limiter";
import { utcDay } from "../../src/experts/limits/usage-counters";
import { waitFor } from "../support/wait-for";
import { useCatalogWithScriptedModels } from "../support/workers/scripted-model";
import { callOf, expertOf, sessionOf } from "../support/workers/session-helpers";
import { admin } from "./admin-test-client";

const lena: UserProps = { userId: "dev-lena", login: "lena", role: "member" };
const milo: UserProps = { userId: "dev-milo", login: "milo", role: "member" };

async function asMember(user: UserProps, method: string, path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const ctx = createExecutionContext();
  const response = await createApp().fetch(new Request(`https://team.example.com/me/api${path}`, { method }), env, contextWithProps(ctx, user));
  await waitOnExecutionContext(ctx);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe("usage against limits (admin) and a member's own data", () => {
  const models = useCatalogWithScriptedModels({
    skills: {
      "limits-view": { limits: { per_user: { runs_per_day: 5, tokens_per_day: 1000 }, per_skill: { runs_in_flight: 3 } }, experts: [expertOf("answer", {})] },
    },
  });

  it("shows today's counters of the skill and each user beside the limits", async () => {
    await env.DB.exec("DELETE FROM usage_counters");
    models.play([{ text: "ok", outputTokens: 5 }]);
    await sessionOf("limits-view", lena).callExpert(callOf("limits-view", "answer", "q", {}, lena));
    // The session and the skill's limiter copy their counters to D1 from their alarms (a second later in production).
    expect(await runDurableObjectAlarm(sessionOf("limits-view", lena))).toBe(true);
    await waitFor("the run settled in the skill's limiter", async () =>
      (await skillLimiterStub(env, "limits-view").row("limits-view", utcDay(Date.now()))).in_flight === 0 ? true : undefined,
    );
    expect(await runDurableObjectAlarm(skillLimiterStub(env, "limits-view"))).toBe(true);
    const { status, body } = await admin("GET", "/skills/limits-view/limits");
    expect(status).toBe(200);
    expect(body).toMatchObject({
      skill: "limits-view",
      limits: { per_user: { runs_per_day: 5, tokens_per_day: 1000 }, per_skill: { runs_in_flight: 3 } },
      perSkill: { runs_per_day: 1, tokens_per_day: 15, runs_in_flight: 0 },
      perUser: [{ userId: "dev-lena", runs_per_day: 1, tokens_per_day: 15, runs_in_flight: 0 }],
    });
    expect(body.resetsAt).toMatch(/T00:00:00\.000Z$/);
    expect((await admin("GET", "/skills/no-such-skill/limits")).status).toBe(404);
  });

  it("a member lists and deletes their own threads and runs, and cannot reach another's", async () => {
    models.play([{ text: "ok" }]);
    const mine = await sessionOf("limits-view", lena).callExpert(callOf("limits-view", "answer", "mine", {}, lena));
    const theirs = await sessionOf("limits-view", milo).callExpert(callOf("limits-view", "answer", "theirs", {}, milo));

    const threads = await asMember(lena, "GET", "/skills/limits-view/threads");
    expect((threads.body.threads as Array<{ id: string }>).map((thread) => thread.id)).toContain(mine.thread);
    expect((threads.body.threads as Array<{ id: string }>).map((thread) => thread.id)).not.toContain(theirs.thread);

    // Milo's thread and run are not in Lena's session: 404, and they stay.
    expect((await asMember(lena, "DELETE", `/skills/limits-view/threads/${theirs.thread}`)).status).toBe(404);
    expect((await asMember(lena, "DELETE", `/skills/limits-view/runs/${theirs.runId}`)).status).toBe(404);
    expect(await sessionOf("limits-view", milo).run(theirs.runId)).not.toBeNull();

    expect(await asMember(lena, "DELETE", `/skills/limits-view/threads/${mine.thread}`)).toEqual({ status: 200, body: { deleted: { thread: mine.thread } } });
    expect(await asMember(lena, "DELETE", `/skills/limits-view/runs/${mine.runId}`)).toEqual({ status: 200, body: { deleted: { run: mine.runId } } });
    const runs = await asMember(lena, "GET", "/skills/limits-view/runs");
    expect((runs.body.runs as Array<{ id: string }>).map((run) => run.id)).not.toContain(mine.runId);
    const missing = await asMember(lena, "DELETE", "/skills/limits-view/threads/not-a-thread");
    expect(missing).toMatchObject({ status: 404, body: { fix: "List yours with GET /me/api/skills/limits-view/threads." } });
  });
});
