import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { listVersions } from "../../src/catalog/catalog-store";
import { clearSkillMemo, loadSkill } from "../../src/catalog/compiled-skill-cache";
import { compiledSkillKey } from "../../src/storage-keys";
import { uniqueSkill } from "../support/catalog-test-data";
import { admin, paths } from "./admin-test-client";

const expert = (description: string) => ({ name: "ask", description, provider: "google" });

describe("the whole catalog", () => {
  // First in the file: PUT /catalog stops serving every skill it does not name.
  it("replaces the catalog and reads it back in a form that can be pushed again", async () => {
    const [one, two] = [uniqueSkill("cat-one"), uniqueSkill("cat-two")];
    const put = await admin("PUT", "/catalog", { skills: { [one]: { experts: [expert("1")] }, [two]: { description: "empty" } } });
    expect(put).toMatchObject({
      status: 200,
      body: {
        skills: [
          { skill: one, version: 1, changed: true },
          { skill: two, version: 1, changed: true },
        ],
      },
    });
    const got = await admin("GET", "/catalog");
    expect(Object.keys(got.body.skills as object).sort()).toEqual([one, two].sort());
    const again = await admin("PUT", "/catalog", got.body);
    expect(again).toMatchObject({ status: 200, body: { skills: [{ changed: false }, { changed: false }], removed: [] } });
    expect(await admin("GET", "/skills")).toMatchObject({ body: { skills: expect.arrayContaining([expect.objectContaining({ name: one, version: 1 })]) } });
  });

  it("refuses an invalid catalog with every problem by path and changes nothing", async () => {
    const skill = uniqueSkill("cat-bad");
    const answer = await admin("PUT", "/catalog", {
      skills: { [skill]: { experts: [{ name: "a", description: "d", internal_tools: { x: ["y"] } }] }, BAD: {} },
    });
    expect(answer.status).toBe(400);
    expect(paths(answer.problems)).toEqual(expect.arrayContaining([`$.skills.${skill}.experts[0].internal_tools.x`, "$.skills.BAD"]));
    expect(await listVersions(env.DB, skill)).toEqual([]);
  });

  it("validates without saving: 200 for a valid document, 400 with paths for an invalid one", async () => {
    const skill = uniqueSkill("validate");
    expect(await admin("POST", "/validate", { skills: { [skill]: { experts: [expert("ok")] } } })).toMatchObject({
      status: 200,
      body: { ok: true, skills: [skill] },
    });
    const bad = await admin("POST", "/validate", { mcps: { fs: { command: "npx" } }, tools: [] });
    expect(bad.status).toBe(400);
    expect(paths(bad.problems)).toContain("$.mcps.fs.command");
    expect(await listVersions(env.DB, skill)).toEqual([]);
    expect(await env.CACHE.get(compiledSkillKey(skill))).toBeNull();
  });

  it("refuses a model base_url that is not an https endpoint, at its path, and saves nothing", async () => {
    const skill = uniqueSkill("base-url");
    const model = (base_url: string) => ({ name: "ask", description: "d", provider: "openai-compatible", model: "m", base_url });
    for (const base_url of ["ftp://models.example.com/v1", "javascript:alert(1)", "https://10.1.2.3/v1"]) {
      for (const [method, path] of [
        ["POST", "/validate"],
        ["PUT", `/skills/${skill}`],
      ] as const) {
        const answer = await admin(method, path, method === "POST" ? { skills: { [skill]: { experts: [model(base_url)] } } } : { experts: [model(base_url)] });
        expect(answer.status, `${method} ${path} ${base_url}`).toBe(400);
        const problem = answer.problems?.find((p) => p.path.endsWith(".experts[0].base_url"));
        expect(problem?.message).toContain("model endpoint `base_url`");
        expect(problem?.fix).toContain("https://");
      }
    }
    expect(await listVersions(env.DB, skill)).toEqual([]);
  });
});

describe("versions and rollback", () => {
  it("lists every change with its author and time, restores an old version as a new one and republishes it", async () => {
    const skill = uniqueSkill("history");
    await admin("PUT", `/skills/${skill}?note=initial`, { experts: [expert("first")] });
    await admin("PUT", `/skills/${skill}/experts/ask`, expert("second"));
    const listed = await admin("GET", `/skills/${skill}/versions`);
    expect(listed.body.versions).toMatchObject([
      { version: 2, author: "dev", note: null, current: true, time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) },
      { version: 1, author: "dev", note: "initial", current: false },
    ]);

    const restored = await admin("POST", `/skills/${skill}/versions/1/restore`);
    expect(restored).toMatchObject({ status: 200, body: { skill, version: 3, restoredFrom: 1 } });
    expect((await admin("GET", `/skills/${skill}/versions`)).body.versions).toMatchObject([
      { version: 3, note: "restored from version 1", current: true },
      {},
      {},
    ]);
    expect(await env.CACHE.get(compiledSkillKey(skill), "json")).toMatchObject({ version: 3, config: { experts: [{ description: "first" }] } });
    expect((await admin("GET", `/skills/${skill}/versions/2`)).body).toMatchObject({
      version: 2,
      author: "dev",
      config: { experts: [{ description: "second" }] },
    });
  });

  it("brings a deleted skill back by restoring a version", async () => {
    const skill = uniqueSkill("undelete");
    await admin("PUT", `/skills/${skill}`, { experts: [expert("kept")] });
    await admin("DELETE", `/skills/${skill}`);
    expect(await admin("POST", `/skills/${skill}/versions/1/restore`)).toMatchObject({ status: 200, body: { version: 2 } });
    clearSkillMemo(env);
    expect((await loadSkill(env, skill))?.config.experts[0]?.description).toBe("kept");
  });

  it("answers 404 for an unknown skill or version and 400 for a version that is not a number", async () => {
    const skill = uniqueSkill("versions-404");
    expect((await admin("GET", `/skills/${skill}/versions`)).status).toBe(404);
    await admin("PUT", `/skills/${skill}`, {});
    expect(await admin("POST", `/skills/${skill}/versions/99/restore`)).toMatchObject({ status: 404, body: { error: `Skill "${skill}" has no version 99.` } });
    expect((await admin("POST", `/skills/${skill}/versions/abc/restore`)).status).toBe(400);
  });

  it("adds no version when the submitted skill equals the live one", async () => {
    const skill = uniqueSkill("same");
    await admin("PUT", `/skills/${skill}`, { experts: [expert("x")] });
    expect(await admin("PUT", `/skills/${skill}`, { experts: [expert("x")] })).toMatchObject({ status: 200, body: { version: 1, changed: false } });
    expect(await listVersions(env.DB, skill)).toHaveLength(1);
  });
});
