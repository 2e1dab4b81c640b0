import type { SkillLimits } from "../../catalog/catalog-schema";
import { log } from "../../observability/logger";
import { sessionStub } from "./session-name";
import { skillLimiterStub } from "../limits/skill-limiter";
import { type CopiedCounterRow, type CounterRow, countersOfDay, userSubject } from "../limits/usage-counters";

/** A counter row with when it was read from its owner (epoch ms), or when D1's copy was written; null when there is no row. */
export type UsageRow = CounterRow & { asOf: number | null };

export interface LiveUsage {
  day: string;
  skill: UsageRow;
  users: Array<UsageRow & { userId: string }>;
}

/**
 * The users read live per view. A team's active users of one skill in one day are usually far
 * fewer; beyond this many, the rest show D1's copy with its own `asOf`.
 */
export const LIVE_USERS_MAX = 100;

/**
 * Today's counters of a skill for the admin, as their owners hold them now: the skill's from its
 * SkillLimiter (which first frees slots of runs that no longer exist), each user's from their
 * ExpertSession. D1's copy lags (a session writes it after its runs start, a second later), so it
 * only says which users have counters today, and stands in for an owner that cannot be asked,
 * with the time it was written. One RPC per limited owner: the admin's path, never a call's.
 */
export async function liveCountersOfDay(env: Env, skill: string, limits: SkillLimits | undefined, now: number): Promise<LiveUsage> {
  const copy = await countersOfDay(env.DB, skill, now);
  const skillRow = limits?.per_skill ? await live(copy.skill, () => skillLimiterStub(env, skill).liveRow(skill, copy.day)) : copied(copy.skill);
  const users = await Promise.all(
    copy.users.map(async ({ user_id, ...row }, index) => ({
      userId: user_id,
      ...(limits?.per_user && index < LIVE_USERS_MAX
        ? await live(row, async () => ({ ...(await sessionStub(env, skill, user_id).limitRow(userSubject(skill, user_id), copy.day)), asOf: Date.now() }))
        : copied(row)),
    })),
  );
  return { day: copy.day, skill: skillRow, users };
}

async function live(fallback: CopiedCounterRow, read: () => Promise<UsageRow>): Promise<UsageRow> {
  try {
    const row = await read();
    return { runs: row.runs, tokens: row.tokens, cost_usd: row.cost_usd, in_flight: row.in_flight, asOf: row.asOf };
  } catch (error) {
    log("warn", "usage counters read from D1's copy: their owner did not answer", { error: error instanceof Error ? error.message : String(error) });
    return copied(fallback);
  }
}

function copied({ updated_at, ...row }: CopiedCounterRow): UsageRow {
  return { ...row, asOf: updated_at };
}
