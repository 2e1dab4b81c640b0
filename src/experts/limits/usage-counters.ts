import type { SkillLimits, UsageLimits } from "../../catalog/catalog-schema";
import { TEAM_TABLES } from "../../storage-keys";
import { type LimitName, type LimitScope, UsageLimitReachedError } from "./limit-errors";

const table = TEAM_TABLES.usageCounters;
// SQLite integers reach 2^63; an unset limit is "more than anyone can use".
const UNLIMITED = Number.MAX_SAFE_INTEGER;
const DAY_MS = 86_400_000;

/** The counted subjects of one run, each with its limits. */
interface Subject {
  scope: LimitScope;
  key: string;
  limits: UsageLimits;
}

/** A run's reserved slot: which rows it counted in, to settle tokens and cost and free in-flight. */
export interface RunReservation {
  day: string;
  subjects: string[];
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

function subjectsOf(skill: string, userId: string, limits: SkillLimits | undefined): Subject[] {
  const subjects: Subject[] = [];
  if (limits?.per_user && hasAny(limits.per_user)) subjects.push({ scope: "per_user", key: userSubject(skill, userId), limits: limits.per_user });
  if (limits?.per_skill && hasAny(limits.per_skill)) subjects.push({ scope: "per_skill", key: skillSubject(skill), limits: limits.per_skill });
  return subjects;
}

function hasAny(limits: UsageLimits): boolean {
  return Object.values(limits).some((value) => value !== undefined);
}

/**
 * Reserves a run slot in every limited subject (the user's, then the skill's), or throws
 * UsageLimitReachedError naming the first limit that is used up. Each reservation is one
 * conditional upsert that counts the run only while every counter of the row is under its
 * limit; D1 executes statements one at a time, so of two isolates racing for the last unit
 * exactly one gets a row back. If a later subject refuses, the earlier reservations are undone.
 * Returns null when the skill has no limits (no D1 round trip on that path).
 */
export async function reserveRun(db: D1Database, skill: string, userId: string, limits: SkillLimits | undefined, now: number): Promise<RunReservation | null> {
  const subjects = subjectsOf(skill, userId, limits);
  if (subjects.length === 0) return null;
  const day = utcDay(now);
  const taken: string[] = [];
  for (const subject of subjects) {
    const {
      runs_per_day: runs = UNLIMITED,
      tokens_per_day: tokens = UNLIMITED,
      cost_per_day_usd: cost = UNLIMITED,
      runs_in_flight: inFlight = UNLIMITED,
    } = subject.limits;
    const row = await db
      .prepare(
        `INSERT INTO ${table} (subject, day, runs, tokens, cost_usd, in_flight, updated_at)
         SELECT ?1, ?2, 1, 0, 0, 1, ?3 WHERE ?4 > 0 AND ?5 > 0 AND ?6 > 0 AND ?7 > 0
         ON CONFLICT (subject, day) DO UPDATE SET runs = runs + 1, in_flight = in_flight + 1, updated_at = excluded.updated_at
         WHERE runs < ?4 AND tokens < ?5 AND cost_usd < ?6 AND in_flight < ?7
         RETURNING runs`,
      )
      .bind(subject.key, day, now, runs, tokens, cost, inFlight)
      .first<{ runs: number }>();
    if (row === null) {
      if (taken.length > 0) await release(db, { day, subjects: taken });
      throw await refusal(db, skill, subject, day, now);
    }
    taken.push(subject.key);
  }
  return { day, subjects: taken };
}

/** Adds the run's tokens and cost to the day it was reserved in and frees its in-flight slot. */
export async function settleRun(db: D1Database, reservation: RunReservation, tokens: number, costUsd: number, now: number): Promise<void> {
  await db.batch(
    reservation.subjects.map((subject) =>
      db
        .prepare(
          `UPDATE ${table} SET tokens = tokens + ?1, cost_usd = cost_usd + ?2, in_flight = max(in_flight - 1, 0), updated_at = ?3 WHERE subject = ?4 AND day = ?5`,
        )
        .bind(tokens, costUsd, now, subject, reservation.day),
    ),
  );
}

async function release(db: D1Database, reservation: RunReservation): Promise<void> {
  await db.batch(
    reservation.subjects.map((subject) =>
      db
        .prepare(`UPDATE ${table} SET runs = max(runs - 1, 0), in_flight = max(in_flight - 1, 0) WHERE subject = ?1 AND day = ?2`)
        .bind(subject, reservation.day),
    ),
  );
}

export interface CounterRow {
  runs: number;
  tokens: number;
  cost_usd: number;
  in_flight: number;
}

const ZERO: CounterRow = { runs: 0, tokens: 0, cost_usd: 0, in_flight: 0 };

async function refusal(db: D1Database, skill: string, subject: Subject, day: string, now: number): Promise<UsageLimitReachedError> {
  const row =
    (await db.prepare(`SELECT runs, tokens, cost_usd, in_flight FROM ${table} WHERE subject = ?1 AND day = ?2`).bind(subject.key, day).first<CounterRow>()) ??
    ZERO;
  const reset = nextUtcMidnight(now);
  // In-flight first: it frees within minutes, while a daily limit waits for midnight.
  const checks: Array<{ name: LimitName; used: number; resetsAt: string | null }> = [
    { name: "runs_in_flight", used: row.in_flight, resetsAt: null },
    { name: "runs_per_day", used: row.runs, resetsAt: reset },
    { name: "tokens_per_day", used: row.tokens, resetsAt: reset },
    { name: "cost_per_day_usd", used: row.cost_usd, resetsAt: reset },
  ];
  // A refused row was at a limit when the upsert ran; by now a run may have ended, so fall back
  // to the first configured limit rather than claim none was hit.
  const configured = checks.filter((check) => subject.limits[check.name] !== undefined);
  const hit = configured.find((check) => check.used >= (subject.limits[check.name] ?? UNLIMITED)) ??
    configured[0] ?? { name: "runs_per_day", used: row.runs, resetsAt: reset };
  return new UsageLimitReachedError(skill, subject.scope, hit.name, subject.limits[hit.name] ?? 0, roundUsed(hit.used), hit.resetsAt);
}

function roundUsed(used: number): number {
  return Math.round(used * 10_000) / 10_000;
}

/** Today's counters of a skill: the skill's own row and each user's, for the admin's usage view. */
export async function countersOfDay(
  db: D1Database,
  skill: string,
  now: number,
): Promise<{ day: string; skill: CounterRow; users: Array<CounterRow & { user_id: string }> }> {
  const day = utcDay(now);
  const rows = await db
    .prepare(
      `SELECT subject, runs, tokens, cost_usd, in_flight FROM ${table} WHERE day = ?1 AND (subject = ?2 OR subject LIKE ?3 ESCAPE '\\') ORDER BY subject`,
    )
    .bind(day, skillSubject(skill), `${escapeLike(`user:${skill}:`)}%`)
    .all<CounterRow & { subject: string }>();
  const prefix = `user:${skill}:`;
  let skillRow = ZERO;
  const users: Array<CounterRow & { user_id: string }> = [];
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
