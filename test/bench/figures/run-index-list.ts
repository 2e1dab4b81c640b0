import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runWrangler } from "../../e2e/harness/wrangler-command";
import type { BenchContext, Figure } from "../bench-context";
import { round, summarize } from "../sample-stats";

const ROWS = 10_000;
const SKILLS = ["alpha", "beta", "gamma", "delta", "epsilon"];
const USERS = 200;
const OUTCOMES = ["ok", "ok", "ok", "ok", "ok", "ok", "ok", "error", "budget_exhausted", "cancelled"];
const DAY_MS = 86_400_000;
/** A fixed clock, so every run seeds the same rows and the filters select the same share. */
const NOW = Date.UTC(2026, 10, 23);
const SPAN_DAYS = 30;

const quote = (value: string) => `'${value.replaceAll("'", "''")}'`;

/** 10,000 index rows spread over 30 days, 5 skills, 200 users, 70 % ok; deterministic. */
function seedSql(): string {
  const statements: string[] = [];
  const batch: string[] = [];
  const flush = () => {
    if (batch.length === 0) return;
    statements.push(
      `INSERT INTO run_index (run_id, skill, expert, user_id, user_login, user_email, thread_id, catalog_version, provider, model, outcome, trace_id, started_at, ended_at, elapsed_ms, steps, input_tokens, output_tokens, tool_calls, tool_errors, downstream_bytes, cost) VALUES\n${batch.join(",\n")};`,
    );
    batch.length = 0;
  };
  for (let i = 0; i < ROWS; i++) {
    const id = `00000000-0000-4000-8000-${i.toString(16).padStart(12, "0")}`;
    const skill = SKILLS[i % SKILLS.length] ?? "alpha";
    const user = `user-${(i * 7) % USERS}`;
    const outcome = OUTCOMES[(i * 3) % OUTCOMES.length] ?? "ok";
    const started = NOW - Math.floor((i / ROWS) * SPAN_DAYS * DAY_MS) - (i % 1000);
    const elapsed = 200 + (i % 900);
    batch.push(
      `(${quote(id)}, ${quote(skill)}, 'ask_docs', ${quote(user)}, ${quote(`login-${user}`)}, NULL, NULL, 1, 'openai-compatible', 'fake-cheap', ${quote(outcome)}, ${quote(i.toString(16).padStart(32, "0"))}, ${started}, ${started + elapsed}, ${elapsed}, 2, 900, 60, 1, 0, 1200, 0.0001)`,
    );
    // D1 refuses a statement over 100 KB (SQLITE_TOOBIG); 200 rows stay near 60 KB.
    if (batch.length === 200) flush();
  }
  flush();
  return statements.join("\n");
}

interface RunsPage {
  runs: unknown[];
  next_cursor: string | null;
}

async function listRuns(baseUrl: string, query: string): Promise<RunsPage> {
  const response = await fetch(`${baseUrl}/admin/api/runs?${query}`);
  const text = await response.text();
  if (!response.ok) throw new Error(`GET /admin/api/runs?${query} answered ${response.status}: ${text.slice(0, 500)}`);
  return JSON.parse(text) as RunsPage;
}

async function d1(ctx: BenchContext, args: string[]): Promise<string> {
  const result = await runWrangler(["d1", "execute", "DB", "--local", "--persist-to", ctx.dev.persistDir, ...args], {
    cwd: ctx.projectDir,
    timeoutMs: 120_000,
  });
  if (result.code !== 0) throw new Error(`wrangler d1 execute ${args.join(" ")} failed (${result.code}):\n${result.output.slice(-2000)}`);
  return result.output;
}

/** The plan SQLite chooses for the list's SELECT with these conditions, one line per step. */
async function queryPlan(ctx: BenchContext, where: string): Promise<string[]> {
  const sql = `EXPLAIN QUERY PLAN SELECT * FROM run_index WHERE ${where} ORDER BY started_at DESC, run_id DESC LIMIT 51`;
  const output = await d1(ctx, ["--json", "--command", sql]);
  const json = output.slice(output.indexOf("["));
  const parsed = JSON.parse(json) as Array<{ results: Array<{ detail: string }> }>;
  return parsed.flatMap((result) => result.results.map((row) => row.detail));
}

/**
 * Run index list: 10,000 runs seeded into the bench's `wrangler dev --local` D1 (one
 * `wrangler d1 execute --file` into its persistence directory, as a deployment's D1 would hold
 * them), then `GET /admin/api/runs` with a skill+outcome+from/to filter and a user filter, first
 * page and a cursor page, sampled round-robin so load drift hits all four alike.
 */
export async function measureRunIndexList(ctx: BenchContext): Promise<Figure[]> {
  const dir = await mkdtemp(join(tmpdir(), "slipsnisse-bench-runs-"));
  try {
    const file = join(dir, "seed.sql");
    await writeFile(file, seedSql());
    await d1(ctx, ["--file", file]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const from = NOW - 20 * DAY_MS;
  const to = NOW - 5 * DAY_MS;
  const filtered = `skill=beta&outcome=ok&from=${from}&to=${to}&limit=50`;
  const byUser = "user=user-42&limit=20";
  const [firstFiltered, firstUser] = await Promise.all([listRuns(ctx.dev.baseUrl, filtered), listRuns(ctx.dev.baseUrl, byUser)]);
  if (firstFiltered.runs.length !== 50 || !firstFiltered.next_cursor)
    throw new Error(`the seeded index gave ${firstFiltered.runs.length} filtered runs; expected a full page and a cursor`);
  if (firstUser.runs.length !== 20 || !firstUser.next_cursor)
    throw new Error(`the seeded index gave ${firstUser.runs.length} runs of user-42; expected a full page and a cursor`);
  const cases = [
    { name: "skill+outcome+from/to, first page", query: filtered },
    { name: "skill+outcome+from/to, cursor page", query: `${filtered}&cursor=${firstFiltered.next_cursor}` },
    { name: "user, first page", query: byUser },
    { name: "user, cursor page", query: `${byUser}&cursor=${firstUser.next_cursor}` },
  ];
  const times = cases.map(() => [] as number[]);
  for (let i = 0; i < ctx.sizes.warmup; i++) for (const { query } of cases) await listRuns(ctx.dev.baseUrl, query);
  const deadline = performance.now() + ctx.sizes.maxMs;
  for (let i = 0; i < ctx.sizes.samples && performance.now() < deadline; i++) {
    for (const [index, { query }] of cases.entries()) {
      const started = performance.now();
      await listRuns(ctx.dev.baseUrl, query);
      times[index]?.push(performance.now() - started);
    }
  }
  const plans = {
    filtered: await queryPlan(ctx, `skill = 'beta' AND outcome = 'ok' AND started_at >= ${from} AND started_at < ${to}`),
    user: await queryPlan(ctx, `user_id = 'user-42'`),
  };
  return cases.map(({ name }, index) => {
    const stats = summarize(times[index] ?? []);
    return {
      id: `Runs ${name}`,
      title: `GET /admin/api/runs over ${ROWS} indexed runs: ${name} (round-robin, n=${stats.n})`,
      value: `${round(stats.p50)} ms p50 (p99 ${round(stats.p99)})`,
      target: "< 50 ms p50",
      pass: stats.p50 < 50,
      note: `query plan: ${(name.startsWith("user") ? plans.user : plans.filtered).join("; ")}`,
      details: { stats, plans },
    };
  });
}
