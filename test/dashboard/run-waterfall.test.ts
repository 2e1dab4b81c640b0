import { env } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import type { UserProps } from "../../src/auth/user-props";
import type { ExpertCallRequest } from "../../src/experts/core/call-types";
import { sessionStub } from "../../src/experts/session/session-name";
import { taggedBase } from "../fixtures/fixture-stats-client";
import { expertOf } from "../support/workers/session-helpers";
import { toResult, useCatalogWithScriptedModels } from "../support/workers/scripted-model";
import { flushRunIndex } from "../support/workers/run-index-flush";
import { dashboardFetch } from "./dashboard-test-client";

const fixtures = inject("fixtureServers");
const echo = taggedBase(fixtures.echo, "waterfall");
const skill = "waterfall-tests";
const erin: UserProps = { userId: "u-erin", login: "erin", role: "member" };
const session = () => sessionStub(env, skill, erin.userId);

/** The waterfall's bars in page order: kind, start (ms on the run's axis), offset and width (percent). */
function bars(page: string) {
  return [...page.matchAll(/<rect class="wf-bar wf-(\w+)" data-start-ms="(\d+)" x="([\d.]+)%" y="1" width="([\d.]+)%"/g)].map((match) => ({
    kind: match[1],
    startMs: Number(match[2]),
    left: Number(match[3]),
    width: Number(match[4]),
  }));
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("run page waterfall", () => {
  const models = useCatalogWithScriptedModels({
    skills: {
      [skill]: {
        servers: { echo: { url: `${echo}/mcp`, transport: "streamable-http" } },
        experts: [expertOf("timer", { echo: ["sleep", "echo", "fail"] }, { max_steps: 4 })],
      },
    },
  });

  it("draws each step's model wait and each tool call as bars on one time axis, in the order they ran", async () => {
    models.play([
      async () => {
        await wait(60);
        return toResult({
          calls: [
            { name: "echo__sleep", input: { ms: 250 } },
            { name: "echo__fail", input: { message: "<b>boom</b>" } },
          ],
        });
      },
      async () => {
        await wait(120);
        return toResult({ text: "Slept and failed." });
      },
    ]);
    const request: ExpertCallRequest = { runId: crypto.randomUUID(), skill, expert: "timer", args: { query: "time it" }, user: erin };
    const result = await session().callExpert(request);
    expect(result.outcome).toBe("ok");
    await flushRunIndex(session());
    const response = await dashboardFetch(`/admin/runs/${result.runId}`, {}, { AUTH: "none", ENVIRONMENT: "test" });
    const page = await response.text();
    expect(response.status).toBe(200);

    const drawn = bars(page);
    // First the wait before the first model call (the session connecting and listing tools).
    expect(drawn.map((bar) => bar.kind)).toEqual(["setup", "model", "tool", "failed", "model"]);
    const [setup, model1, sleep, fail, model2] = drawn;
    if (!setup || !model1 || !sleep || !fail || !model2) throw new Error("five bars expected");
    expect(setup.startMs).toBe(0);
    expect(model1.left).toBeCloseTo(setup.left + setup.width, 1);
    for (const bar of drawn) {
      expect(bar.width).toBeGreaterThan(0);
      expect(bar.left + bar.width).toBeLessThanOrEqual(100.01);
    }
    // The sleep starts after the first model answer, the second model call after the sleep returned.
    expect(sleep.startMs).toBeGreaterThanOrEqual(model1.startMs + 60);
    expect(model2.startMs).toBeGreaterThanOrEqual(sleep.startMs + 250);
    expect(sleep.left).toBeGreaterThan(model1.left);
    expect(model2.left).toBeGreaterThan(sleep.left);
    // Widths follow durations on the axis: the sleep's bar covers at least its 250 ms.
    const axisMs = Number(/axis 0 – (\d+) ms/.exec(page)?.[1]);
    expect(sleep.width).toBeGreaterThanOrEqual((250 / axisMs) * 100 - 0.01);
    expect(fail.startMs).toBeGreaterThanOrEqual(model1.startMs + 60);
    // One line per bar, details open below each in a run this short; untrusted text stays escaped inside them.
    expect([...page.matchAll(/<details open><summary class="wf-row">/g)]).toHaveLength(4);
    expect(page).toContain("&lt;b&gt;boom&lt;/b&gt;");
    expect(page).not.toContain("<b>boom</b>");
  });
});
