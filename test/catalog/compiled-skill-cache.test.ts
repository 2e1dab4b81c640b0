import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { saveSkill } from "../../src/catalog/catalog-store";
import { clearSkillMemo, loadSkill } from "../../src/catalog/compiled-skill-cache";
import { saveSkillConfig } from "../../src/catalog/catalog-service";
import { compiledSkillKey } from "../../src/storage-keys";
import { skillConfig, uniqueSkill } from "../support/catalog-test-data";

async function dropFromD1(skill: string): Promise<void> {
  await env.DB.batch([
    env.DB.prepare("DELETE FROM skills WHERE name = ?").bind(skill),
    env.DB.prepare("DELETE FROM catalog_versions WHERE skill = ?").bind(skill),
  ]);
}

describe("compiled skill cache (KV over D1)", () => {
  it("a cold read fills KV from D1; a warm read is served from KV without D1", async () => {
    const skill = uniqueSkill("warm");
    await saveSkill(env.DB, skill, skillConfig("from d1"), { author: "alice" });
    expect(await env.CACHE.get(compiledSkillKey(skill))).toBeNull();
    expect(await loadSkill(env, skill)).toMatchObject({ name: skill, version: 1, config: { description: "from d1" } });
    expect(await env.CACHE.get(compiledSkillKey(skill), "json")).toMatchObject({ name: skill, version: 1 });

    await dropFromD1(skill);
    clearSkillMemo(env); // prove KV (not the in-isolate memo) answers
    expect((await loadSkill(env, skill))?.config.description).toBe("from d1");
  });

  it("the in-isolate memo answers within its TTL even without KV", async () => {
    const skill = uniqueSkill("memo");
    await saveSkillConfig(env, skill, skillConfig("memo"), { author: "alice" });
    await loadSkill(env, skill);
    await env.CACHE.delete(compiledSkillKey(skill));
    await dropFromD1(skill);
    expect((await loadSkill(env, skill))?.version).toBe(1);
    clearSkillMemo(env);
    expect(await loadSkill(env, skill)).toBeNull();
  });

  it("saving skill A rewrites A's key and leaves B's entry untouched", async () => {
    const a = uniqueSkill("a");
    const b = uniqueSkill("b");
    await saveSkillConfig(env, a, skillConfig("a1"), { author: "alice" });
    await saveSkillConfig(env, b, skillConfig("b1"), { author: "alice" });
    // Mark B's KV entry so any rewrite or deletion of it would show.
    const marked = { name: b, version: 1, config: skillConfig("b marked") };
    await env.CACHE.put(compiledSkillKey(b), JSON.stringify(marked));

    await saveSkillConfig(env, a, skillConfig("a2"), { author: "bob" });
    expect(await env.CACHE.get(compiledSkillKey(a), "json")).toMatchObject({ version: 2, config: { description: "a2" } });
    expect(await env.CACHE.get(compiledSkillKey(b), "json")).toEqual(marked);
    clearSkillMemo(env);
    expect((await loadSkill(env, a))?.config.description).toBe("a2");
  });

  it("a KV copy that does not parse is treated as a miss and replaced from D1", async () => {
    const skill = uniqueSkill("bad-kv");
    await saveSkill(env.DB, skill, skillConfig("truth"), { author: "alice" });
    await env.CACHE.put(compiledSkillKey(skill), JSON.stringify({ name: skill, version: 1, config: { experts: "nope" } }));
    clearSkillMemo(env);
    expect((await loadSkill(env, skill))?.config.description).toBe("truth");
    expect(await env.CACHE.get(compiledSkillKey(skill), "json")).toMatchObject({ config: { description: "truth" } });
  });

  it("the KV copy holds secret references, not values", async () => {
    const skill = uniqueSkill("kv-secret");
    await saveSkillConfig(env, skill, skillConfig("s"), { author: "alice" });
    const raw = await env.CACHE.get(compiledSkillKey(skill));
    expect(raw).toContain("Bearer ${API_KEY}");
  });
});
