import type { SkillLimits, UsageLimits } from "../../catalog/catalog-schema";
import { TEAM_TABLES } from "../../storage-keys";
import { type LimitName, type LimitScope, UsageLimitReachedError } from "./limit-errors";

const table = TEAM_TABLES.usageCounters;
// SQLite integers reach 2^63; an unset limit is "more than anyone can use".
const UNLIMITED = Number.MAX_SAFE_INTEGER;
const DAY_MS = 86_400_000;

/** A counted subject of one run (`user:<skill>:<user>` or `skill:<skill>`) with its limits. */
export interface Subject {
  scope: LimitScope;
  key: string;
  limits: UsageLimits;
}

export function utcDay(now: number): string {
  return new Date(now).toISOString().slice(0, 10);
}

export function nextUtcMidnight(now: number): string {
  return new Date(Math.floor(now / DAY_MS) * DAY_MS + DAY_MS).toISOString();
}

export function userSubject(skill: string, userId: string): string {
  return `user:${skill}:${userId}`;
}

export function skillSubject(skill: string): string {
  return `skill:${skill}`;
}

/** The counted subjects of one run, each with its limits. */
export function subjectsOf(skill: string, userId: string, limits: SkillLimits | undefined): Subject[] {
  const subjects: Subject[] = [];
  if (limits?.per_user && hasAny(limits.per_user)) subjects.push({ scope: "per_user", key: userSubject(skill, userId), limits: limits.per_user });
  if (limits?.per_skill && hasAny(limits.per_skill)) subjects.push({ scope: "per_skill", key: skillSubject(skill), limits: limits.per_skill });
  return subjects;
}

function hasAny(limits: UsageLimits): boolean {
  return Object.values(limits).some((value) => value !== undefined);
}

/** True when a run may start: every counter of the subject's row is under its limit. */
export function underLimits(row: CounterRow, limits: UsageLimits): boolean {
  return (
    row.runs < (limits.runs_per_day ?? UNLIMITED) &&
    row.tokens < (limits.tokens_per_day ?? UNLIMITED) &&
    row.cost_usd < (limits.cost_per_day_usd ?? UNLIMITED) &&
    row.in_flight < (limits.runs_in_flight ?? UNLIMITED)
  );
}

export type CounterRow = {
  runs: number;
  tokens: number;
  cost_usd: number;
  in_flight: number;
};

export const ZERO_COUNTERS: CounterRow = { runs: 0, tokens: 0, cost_usd: 0, in_flight: 0 };

/** The error for a subject whose row `row` refused a run (limit-counters.ts). */
export function refusalOf(skill: string, subject: Subject, row: CounterRow, now: number): UsageLimitReachedError {
  const reset = nextUtcMidnight(now);
  // In-flight first: it frees within minutes, while a daily limit waits for midnight.
  const checks: Array<{ name: LimitName; used: number; resetsAt: string | null }> = [
    { name: "runs_in_flight", used: row.in_flight, resetsAt: null },
    { name: "runs_per_day", used: row.runs, resetsAt: reset },
    { name: "tokens_per_day", used: row.tokens, resetsAt: reset },
    { name: "cost_per_day_usd", used: row.cost_usd, resetsAt: reset },
  ];
  const configured = checks.filter((check) => subject.limits[check.name] !== undefined);
  const hit = configured.find((check) => check.used >= (subject.limits[check.name] ?? UNLIMITED)) ??
    configured[0] ?? { name: "runs_per_day", used: row.runs, resetsAt: reset };
  return new UsageLimitReachedError(skill, subject.scope, hit.name, subject.limits[hit.name] ?? 0, roundUsed(hit.used), hit.resetsAt);
}

function roundUsed(used: number): number {
  return Math.round(used * 10_000) / 10_000;
}

/** A counter row as D1's copy has it: `updated_at` is when its owner last changed it (null: no row). */
export type CopiedCounterRow = CounterRow & { updated_at: number | null };

/**
 * Today's counters of a skill as D1's copy has them (each owner writes its rows about a second
 * after a change, and a session's only once its runs have started): the skill's own row and each
 * user's. The admin's view reads the owners instead (live-usage.ts) and uses this for the list of
 * users and as the fallback.
 */
export async function countersOfDay(
  db: D1Database,
  skill: string,
  now: number,
): Promise<{ day: string; skill: CopiedCounterRow; users: Array<CopiedCounterRow & { user_id: string }> }> {
  const day = utcDay(now);
  const rows = await db
    .prepare(
      `SELECT subject, runs, tokens, cost_usd, in_flight, updated_at FROM ${table} WHERE day = ?1 AND (subject = ?2 OR subject LIKE ?3 ESCAPE '\\') ORDER BY subject`,
    )
    .bind(day, skillSubject(skill), `${escapeLike(`user:${skill}:`)}%`)
    .all<CopiedCounterRow & { subject: string }>();
  const prefix = `user:${skill}:`;
  let skillRow: CopiedCounterRow = { ...ZERO_COUNTERS, updated_at: null };
  const users: Array<CopiedCounterRow & { user_id: string }> = [];
  for (const { subject, ...counters } of rows.results) {
    if (subject === skillSubject(skill)) skillRow = counters;
    else users.push({ user_id: subject.slice(prefix.length), ...counters });
  }
  return { day, skill: skillRow, users };
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (char) => `\\${char}`);
}

/** Counter rows of days before `cutoffDay` (retention). */
export async function deleteCountersBefore(db: D1Database, cutoffDay: string): Promise<number> {
  const result = await db.prepare(`DELETE FROM ${table} WHERE day < ?1`).bind(cutoffDay).run();
  return result.meta.changes;
}

/** A counter row as its owning Durable Object holds it, for the D1 copy. */
export type OwnedCounterRow = CounterRow & {
  subject: string;
  day: string;
  updated_at: number;
};

/**
 * Writes counter rows to D1 as they are in the object that owns them (absolute values, so a
 * retried or repeated write is harmless): each subject has exactly one owner (the user's session
 * for `user:`, the skill's SkillLimiter for `skill:`), so nothing else writes its row.
 */
export async function writeCounters(db: D1Database, rows: readonly OwnedCounterRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db.batch(
    rows.map((row) =>
      db
        .prepare(
          `INSERT INTO ${table} (subject, day, runs, tokens, cost_usd, in_flight, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
           ON CONFLICT (subject, day) DO UPDATE SET runs = excluded.runs, tokens = excluded.tokens, cost_usd = excluded.cost_usd,
             in_flight = excluded.in_flight, updated_at = excluded.updated_at`,
        )
        .bind(row.subject, row.day, row.runs, row.tokens, row.cost_usd, row.in_flight, row.updated_at),
    ),
  );
}
