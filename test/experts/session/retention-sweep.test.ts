import { createExecutionContext, createScheduledController, env, waitOnExecutionContext } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { replaceCatalog } from "../../../src/catalog/catalog-service";
import { sweepRetention } from "../../../src/experts/session/retention-sweep";
import worker from "../../../src/index";
import { expertOf } from "../../support/workers/session-helpers";

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 23, 3, 17);

// The run index's columns as its own migration defines them; created here when this build has
// no index yet, so the sweep is tested against the table it will meet.
const RUN_INDEX = `CREATE TABLE IF NOT EXISTS run_index (
  run_id TEXT PRIMARY KEY, skill TEXT NOT NULL, expert TEXT NOT NULL, user_id TEXT NOT NULL, user_login TEXT, user_email TEXT,
  thread_id TEXT, catalog_version INTEGER, provider TEXT NOT NULL, model TEXT NOT NULL, outcome TEXT NOT NULL, trace_id TEXT NOT NULL,
  started_at INTEGER NOT NULL, ended_at INTEGER NOT NULL, elapsed_ms INTEGER NOT NULL, steps INTEGER NOT NULL, input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL, tool_calls INTEGER NOT NULL, tool_errors INTEGER NOT NULL, downstream_bytes INTEGER NOT NULL, cost REAL
) WITHOUT ROWID`;

async function indexRun(runId: string, skill: string, daysAgo: number): Promise<void> {
  const at = NOW - daysAgo * DAY;
  await env.DB.prepare(
    `INSERT INTO run_index (run_id, skill, expert, user_id, provider, model, outcome, trace_id, started_at, ended_at, elapsed_ms, steps, input_tokens, output_tokens, tool_calls, tool_errors, downstream_bytes)
     VALUES (?1, ?2, 'answer', 'u-1', 'workers-ai', 'm', 'ok', 't', ?3, ?3, 1, 1, 1, 1, 0, 0, 0)`,
  )
    .bind(runId, skill, at)
    .run();
}

async function indexedRuns(): Promise<string[]> {
  return (await env.DB.prepare("SELECT run_id FROM run_index ORDER BY run_id").all<{ run_id: string }>()).results.map((row) => row.run_id);
}

describe("retention sweep (cron)", () => {
  beforeAll(async () => {
    const catalog = {
      skills: { "sweep-short": { retention_days: 3, experts: [expertOf("answer", {})] }, "sweep-default": { experts: [expertOf("answer", {})] } },
    };
    expect((await replaceCatalog(env, catalog, "test")).ok).toBe(true);
  });

  it("is a no-op for the run index when this deployment has none", async () => {
    await env.DB.exec("DROP TABLE IF EXISTS run_index");
    await expect(sweepRetention(env.DB, NOW)).resolves.toMatchObject({ indexRows: 0 });
  });

  it("deletes index rows and usage counters past each skill's retention, nothing younger", async () => {
    await env.DB.exec(RUN_INDEX.replace(/\n/g, " "));
    await env.DB.exec("DELETE FROM run_index");
    await indexRun("short-old", "sweep-short", 4);
    await indexRun("short-young", "sweep-short", 2);
    await indexRun("default-old", "sweep-default", 31);
    await indexRun("default-young", "sweep-default", 29);
    await indexRun("gone-skill-old", "deleted-skill", 31);
    await indexRun("gone-skill-young", "deleted-skill", 5);
    await env.DB.exec("DELETE FROM usage_counters");
    await env.DB.prepare(
      "INSERT INTO usage_counters (subject, day, updated_at) VALUES ('skill:sweep-short', '2026-10-01', 0), ('skill:sweep-short', '2026-11-20', 0)",
    ).run();

    expect(await sweepRetention(env.DB, NOW)).toEqual({ indexRows: 3, counterRows: 1 });
    expect(await indexedRuns()).toEqual(["default-young", "gone-skill-young", "short-young"]);
    expect((await env.DB.prepare("SELECT day FROM usage_counters").all()).results).toEqual([{ day: "2026-11-20" }]);
  });

  it("the Worker's scheduled handler runs the sweep", async () => {
    await indexRun("scheduled-old", "sweep-short", 10);
    const ctx = createExecutionContext();
    await worker.scheduled?.(createScheduledController({ scheduledTime: NOW, cron: "17 3 * * *" }), env, ctx);
    await waitOnExecutionContext(ctx);
    expect(await indexedRuns()).not.toContain("scheduled-old");
  });
});
