import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { listSkills, listVersions } from "../../src/catalog/catalog-store";
import { clearSkillMemo, loadSkill } from "../../src/catalog/compiled-skill-cache";
import { removeSkill, replaceCatalog, restoreSkillVersion } from "../../src/catalog/catalog-service";
import { compiledSkillKey } from "../../src/storage-keys";
import { skillConfig, uniqueSkill } from "../support/catalog-test-data";

const server = { url: "https://docs.example.com/mcp", headers: { Authorization: "Bearer ${API_KEY}" } };
const expert = (description: string) => ({ name: "ask", description, internal_tools: { docs: ["search"] } });

describe("replaceCatalog", () => {
  it("validates first and writes nothing when there are problems", async () => {
    const skill = uniqueSkill("refused");
    const result = await replaceCatalog(env, { skills: { [skill]: { servers: { docs: { command: "npx" } } } } }, "alice");
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.problems[0]?.path).toBe(`$.skills.${skill}.servers.docs.command`);
    expect(await listVersions(env.DB, skill)).toEqual([]);
  });

  it("saves each skill, publishes it, skips unchanged ones and removes skills not in the catalog", async () => {
    const one = uniqueSkill("one");
    const two = uniqueSkill("two");
    const first = await replaceCatalog(env, { skills: { [one]: { servers: { docs: server }, experts: [expert("1")] }, [two]: { experts: [] } } }, "alice");
    expect(first).toMatchObject({
      ok: true,
      versions: [
        { skill: one, version: 1, changed: true },
        { skill: two, version: 1, changed: true },
      ],
    });
    expect(await env.CACHE.get(compiledSkillKey(one), "json")).toMatchObject({ version: 1 });

    const second = await replaceCatalog(env, { skills: { [one]: { servers: { docs: server }, experts: [expert("1")] } } }, "bob", "drop two");
    expect(second).toMatchObject({ ok: true, versions: [{ skill: one, version: 1, changed: false }] });
    if (second.ok) expect(second.removed).toContain(two);
    clearSkillMemo(env);
    expect(await loadSkill(env, two)).toBeNull();
    expect(await env.CACHE.get(compiledSkillKey(two))).toBeNull();
    expect((await listSkills(env.DB)).map((s) => s.name)).toContain(one);
  });

  it("accepts the seed format as the default skill", async () => {
    const result = await replaceCatalog(env, { mcps: { docs: server }, tools: [expert("seeded")] }, "npm-start");
    expect(result).toMatchObject({ ok: true, versions: [{ skill: "default" }] });
    clearSkillMemo(env);
    expect((await loadSkill(env, "default"))?.config.experts[0]?.description).toBe("seeded");
  });
});

describe("restore and remove through the service keep KV in step", () => {
  it("restoreSkillVersion publishes the restored content", async () => {
    const skill = uniqueSkill("svc-restore");
    await replaceCatalog(env, { skills: { [skill]: skillConfig("v1") } }, "alice");
    await replaceCatalog(env, { skills: { [skill]: skillConfig("v2") } }, "alice");
    expect(await restoreSkillVersion(env, skill, 1, "carol")).toBe(3);
    expect(await env.CACHE.get(compiledSkillKey(skill), "json")).toMatchObject({ version: 3, config: { description: "v1" } });
    expect(await removeSkill(env, skill)).toBe(true);
    expect(await env.CACHE.get(compiledSkillKey(skill))).toBeNull();
  });
});
