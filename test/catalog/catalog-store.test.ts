import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { InvalidCatalogError, SkillVersionNotFoundError, StoredSkillInvalidError } from "../../src/catalog/catalog-errors";
import { deleteSkill, getSkill, getVersion, listSkills, listVersions, restoreVersion, saveSkill, saveSkills } from "../../src/catalog/catalog-store";
import { skillConfig, uniqueSkill } from "../support/catalog-test-data";

describe("catalog store (D1)", () => {
  it("each save adds a version and makes it current", async () => {
    const skill = uniqueSkill("versions");
    expect(await saveSkill(env.DB, skill, skillConfig("one"), { author: "alice" })).toBe(1);
    expect(await saveSkill(env.DB, skill, skillConfig("two"), { author: "bob", note: "second" })).toBe(2);
    const live = await getSkill(env.DB, skill);
    expect(live).toMatchObject({ name: skill, version: 2, config: { description: "two" } });
    expect(await getSkill(env.DB, uniqueSkill("never-saved"))).toBeNull();
  });

  it("concurrent saves get distinct versions", async () => {
    const skill = uniqueSkill("concurrent");
    const versions = await Promise.all([1, 2, 3, 4, 5].map((n) => saveSkill(env.DB, skill, skillConfig(`c${n}`), { author: "alice" })));
    expect([...versions].sort()).toEqual([1, 2, 3, 4, 5]);
    expect((await getSkill(env.DB, skill))?.version).toBe(5);
  });

  it("restore creates a new version with the old content; listVersions shows author and time", async () => {
    const skill = uniqueSkill("restore");
    const before = Date.now();
    await saveSkill(env.DB, skill, skillConfig("original"), { author: "alice" });
    await saveSkill(env.DB, skill, skillConfig("changed"), { author: "bob" });
    expect(await restoreVersion(env.DB, skill, 1, "carol")).toBe(3);
    expect((await getSkill(env.DB, skill))?.config.description).toBe("original");
    const versions = await listVersions(env.DB, skill);
    expect(versions.map((v) => [v.version, v.author, v.current])).toEqual([
      [3, "carol", true],
      [2, "bob", false],
      [1, "alice", false],
    ]);
    expect(versions[0]?.note).toBe("restored from version 1");
    for (const v of versions) expect(v.createdAt).toBeGreaterThanOrEqual(before);
    expect((await getVersion(env.DB, skill, 2))?.config.description).toBe("changed");
    await expect(restoreVersion(env.DB, skill, 99, "carol")).rejects.toBeInstanceOf(SkillVersionNotFoundError);
  });

  it("delete stops serving a skill but keeps its history, and numbering continues", async () => {
    const skill = uniqueSkill("delete");
    await saveSkill(env.DB, skill, skillConfig("v1"), { author: "alice" });
    expect((await listSkills(env.DB)).map((s) => s.name)).toContain(skill);
    expect(await deleteSkill(env.DB, skill)).toBe(true);
    expect(await getSkill(env.DB, skill)).toBeNull();
    expect((await listSkills(env.DB)).map((s) => s.name)).not.toContain(skill);
    expect((await listVersions(env.DB, skill)).map((v) => v.current)).toEqual([false]);
    expect(await restoreVersion(env.DB, skill, 1, "alice")).toBe(2);
    expect(await deleteSkill(env.DB, uniqueSkill("absent"))).toBe(false);
  });

  it("saveSkills saves several skills and stops serving others in one call", async () => {
    const [a, b, old] = [uniqueSkill("multi-a"), uniqueSkill("multi-b"), uniqueSkill("multi-old")];
    await saveSkill(env.DB, old, skillConfig("old"), { author: "alice" });
    await saveSkill(env.DB, a, skillConfig("a1"), { author: "alice" });
    const versions = await saveSkills(
      env.DB,
      [
        { skill: a, config: skillConfig("a2") },
        { skill: b, config: skillConfig("b1") },
      ],
      { author: "bob" },
      [old],
    );
    expect(versions).toEqual([2, 1]);
    expect(await getSkill(env.DB, old)).toBeNull();
    expect((await getSkill(env.DB, b))?.config.description).toBe("b1");
  });

  it("stores a header secret as its reference, never a value", async () => {
    const skill = uniqueSkill("secrets");
    await saveSkill(env.DB, skill, skillConfig("s"), { author: "alice" });
    const row = await env.DB.prepare("SELECT config_json FROM catalog_versions WHERE skill = ?").bind(skill).first<{ config_json: string }>();
    expect(row?.config_json).toContain("Bearer ${API_KEY}");
  });

  it("refuses to store a literal credential", async () => {
    const config = skillConfig("leak");
    const docs = config.servers.docs;
    if (!docs) throw new Error("fixture");
    docs.headers = { Authorization: "Bearer sk-live-123456" };
    const skill = uniqueSkill("leak");
    await expect(saveSkill(env.DB, skill, config, { author: "alice" })).rejects.toBeInstanceOf(InvalidCatalogError);
    const count = await env.DB.prepare("SELECT COUNT(*) AS n FROM catalog_versions WHERE skill = ?").bind(skill).first<{ n: number }>();
    expect(count?.n).toBe(0);
  });

  it("re-validates stored JSON when reading it", async () => {
    const skill = uniqueSkill("corrupt");
    await saveSkill(env.DB, skill, skillConfig("ok"), { author: "alice" });
    await env.DB.prepare("UPDATE catalog_versions SET config_json = ? WHERE skill = ?")
      .bind(JSON.stringify({ experts: [{ name: 7 }] }), skill)
      .run();
    await expect(getSkill(env.DB, skill)).rejects.toBeInstanceOf(StoredSkillInvalidError);
  });
});
