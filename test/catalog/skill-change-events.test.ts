import { env } from "cloudflare:test";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { removeSkill, replaceCatalog, restoreSkillVersion, saveSkillConfig } from "../../src/catalog/catalog-service";
import { onSkillChanged } from "../../src/catalog/skill-change-events";
import { skillConfig, uniqueSkill } from "../support/catalog-test-data";

/**
 * Every catalog write announces the skills it changed (what the MCP surface turns into
 * `notifications/tools/list_changed`), so no caller of the service can forget to.
 */
describe("catalog writes announce the skills they change", () => {
  const heard: string[] = [];
  const stop = onSkillChanged((skill) => heard.push(skill));
  afterEach(() => {
    heard.length = 0;
  });
  afterAll(stop);

  it("saveSkillConfig: a new version announces, saving the live config again does not", async () => {
    const skill = uniqueSkill("save");
    await saveSkillConfig(env, skill, skillConfig("v1"), { author: "alice" });
    expect(heard).toEqual([skill]);
    await saveSkillConfig(env, skill, skillConfig("v1"), { author: "alice" });
    expect(heard).toEqual([skill]);
  });

  it("restoreSkillVersion announces the restored skill", async () => {
    const skill = uniqueSkill("restore");
    await saveSkillConfig(env, skill, skillConfig("v1"), { author: "alice" });
    await saveSkillConfig(env, skill, skillConfig("v2"), { author: "alice" });
    heard.length = 0;
    await restoreSkillVersion(env, skill, 1, "carol");
    expect(heard).toEqual([skill]);
  });

  it("removeSkill announces a skill that existed, and nothing for one that did not", async () => {
    const skill = uniqueSkill("remove");
    await saveSkillConfig(env, skill, skillConfig("v1"), { author: "alice" });
    heard.length = 0;
    expect(await removeSkill(env, skill)).toBe(true);
    expect(heard).toEqual([skill]);
    expect(await removeSkill(env, uniqueSkill("never"))).toBe(false);
    expect(heard).toEqual([skill]);
  });

  it("replaceCatalog announces the changed and removed skills only, and nothing when refused", async () => {
    const [kept, changed, dropped] = [uniqueSkill("kept"), uniqueSkill("changed"), uniqueSkill("dropped")];
    await replaceCatalog(env, { skills: { [kept]: skillConfig("k"), [changed]: skillConfig("c1"), [dropped]: skillConfig("d") } }, "alice");
    // Skills saved by the tests above are not in this catalog, so they are removed (and announced) too.
    expect(heard).toEqual(expect.arrayContaining([kept, changed, dropped]));
    heard.length = 0;
    await replaceCatalog(env, { skills: { [kept]: skillConfig("k"), [changed]: skillConfig("c2") } }, "alice");
    expect(heard.sort()).toEqual([changed, dropped].sort());
    heard.length = 0;
    const refused = await replaceCatalog(env, { skills: { [kept]: { servers: { docs: { command: "npx" } } } } }, "alice");
    expect(refused.ok).toBe(false);
    expect(heard).toEqual([]);
  });
});
