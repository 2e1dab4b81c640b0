import { z } from "zod";
import { compiledSkillKey } from "../storage-keys";
import { skillSchema } from "./catalog-schema";
import { getSkill, type StoredSkill } from "./catalog-store";

/** The live version of one skill as the hot path needs it. Treat it as read-only: it is shared. */
export type CompiledSkill = StoredSkill;
export type CatalogBindings = Pick<Env, "DB" | "CACHE">;

const compiledSkillSchema = z.object({ name: z.string(), version: z.number().int().min(1), config: skillSchema });

/**
 * A backstop: saves rewrite the key at once, but a row changed behind the admin API's back
 * (`wrangler d1 execute`) would otherwise stay stale in KV forever.
 */
const KV_TTL_SECONDS = 3_600;

/**
 * In-isolate memo. Safe because it cannot be staler than KV itself: KV reads may lag a write by
 * up to about 60 s in other locations, so a 3 s memo adds no new inconsistency, and a save in
 * this isolate replaces its entry at once. Keyed by the KV namespace object, so two bindings (or
 * two test environments) never share entries. It saves a KV read per MCP request in a burst.
 */
const MEMO_TTL_MS = 3_000;
const memo = new WeakMap<KVNamespace, Map<string, { skill: CompiledSkill; until: number }>>();

function memoFor(env: CatalogBindings): Map<string, { skill: CompiledSkill; until: number }> {
  let entries = memo.get(env.CACHE);
  if (!entries) {
    entries = new Map();
    memo.set(env.CACHE, entries);
  }
  return entries;
}

/** Hot path: memo, then KV, then D1 (and KV is refilled). Null when the skill does not exist. */
export async function loadSkill(env: CatalogBindings, skill: string): Promise<CompiledSkill | null> {
  const entries = memoFor(env);
  const hit = entries.get(skill);
  if (hit && hit.until > Date.now()) return hit.skill;
  entries.delete(skill);

  const cached = await readKv(env, skill);
  const compiled = cached ?? (await getSkill(env.DB, skill));
  if (!compiled) return null;
  if (!cached) await writeKv(env, compiled);
  entries.set(skill, { skill: compiled, until: Date.now() + MEMO_TTL_MS });
  return compiled;
}

/** After a save or restore: rewrites this skill's key only; every other skill's entry stays. */
export async function publishSkill(env: CatalogBindings, compiled: CompiledSkill): Promise<void> {
  await writeKv(env, compiled);
  memoFor(env).set(compiled.name, { skill: compiled, until: Date.now() + MEMO_TTL_MS });
}

export async function forgetSkill(env: CatalogBindings, skill: string): Promise<void> {
  memoFor(env).delete(skill);
  await env.CACHE.delete(compiledSkillKey(skill));
}

/** Tests (and a caller that must see a write from another isolate at once) drop the memo. */
export function clearSkillMemo(env: CatalogBindings): void {
  memo.delete(env.CACHE);
}

async function readKv(env: CatalogBindings, skill: string): Promise<CompiledSkill | null> {
  const raw = await env.CACHE.get(compiledSkillKey(skill), "json");
  if (raw === null) return null;
  // A KV copy that no longer parses (older build, hand edit) is a miss, not an outage.
  const parsed = compiledSkillSchema.safeParse(raw);
  return parsed.success && parsed.data.name === skill ? parsed.data : null;
}

async function writeKv(env: CatalogBindings, compiled: CompiledSkill): Promise<void> {
  await env.CACHE.put(compiledSkillKey(compiled.name), JSON.stringify(compiled), { expirationTtl: KV_TTL_SECONDS });
}
