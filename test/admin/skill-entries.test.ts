import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { listVersions } from "../../src/catalog/catalog-store";
import { uniqueSkill } from "../support/catalog-test-data";
import { admin, paths } from "./admin-test-client";

const docs = { url: "https://docs.example.com/mcp", headers: { Authorization: "Bearer ${DOCS_TOKEN}" } };
const askDocs = { name: "ask_docs", description: "Answers from the docs.", internal_tools: { docs: ["search"] } };

async function newSkill(label: string): Promise<string> {
  const skill = uniqueSkill(label);
  const created = await admin("PUT", `/skills/${skill}`, { servers: { docs }, experts: [askDocs] });
  expect(created.status).toBe(201);
  return skill;
}

describe("whole skills", () => {
  it("creates with 201, replaces with 200, reads back and deletes", async () => {
    const skill = await newSkill("whole");
    const replaced = await admin("PUT", `/skills/${skill}`, { description: "v2", servers: { docs }, experts: [askDocs] });
    expect(replaced).toMatchObject({ status: 200, body: { skill, version: 2, changed: true } });
    const read = await admin("GET", `/skills/${skill}`);
    expect(read.body).toMatchObject({ name: skill, version: 2, config: { description: "v2", servers: { docs: { transport: "auto" } } } });
    expect((await admin("DELETE", `/skills/${skill}`)).status).toBe(200);
    expect((await admin("GET", `/skills/${skill}`)).status).toBe(404);
    expect((await admin("DELETE", `/skills/${skill}`)).status).toBe(404);
  });

  it("refuses an invalid skill with 400 and every problem at a path into the body, saving nothing", async () => {
    const skill = uniqueSkill("bad");
    const answer = await admin("PUT", `/skills/${skill}`, {
      servers: { docs: { url: "not a url" }, "Bad Id": { url: "https://x.example.com/mcp" } },
      experts: [{ name: "ask docs", description: "", internal_tools: { nowhere: ["x"] } }],
    });
    expect(answer.status).toBe(400);
    expect(paths(answer.problems)).toEqual(
      expect.arrayContaining([
        "$.servers.docs.url",
        '$.servers["Bad Id"]',
        "$.experts[0].name",
        "$.experts[0].description",
        "$.experts[0].internal_tools.nowhere",
      ]),
    );
    expect(answer.problems.every((problem) => problem.fix.length > 0)).toBe(true);
    expect(await listVersions(env.DB, skill)).toEqual([]);
  });

  it("answers an unknown admin route with a JSON 404", async () => {
    expect(await admin("GET", "/nothing-here")).toMatchObject({ status: 404, body: { error: "No admin route GET /admin/api/nothing-here." } });
  });

  it("refuses a skill name that cannot be a URL path, and a body that is not JSON", async () => {
    expect(await admin("PUT", "/skills/Has_Caps", {})).toMatchObject({ status: 400, body: { error: expect.stringContaining("lowercase") } });
    expect(await admin("PUT", `/skills/${uniqueSkill("json")}`, "{not json")).toMatchObject({
      status: 400,
      body: { error: "The request body is not valid JSON." },
    });
  });

  it("makes a save conditional with If-Match and answers 412 to a stale version", async () => {
    const skill = await newSkill("ifmatch");
    const stale = await admin("PUT", `/skills/${skill}`, { description: "late" }, { "if-match": "7" });
    expect(stale.status).toBe(412);
    const fresh = await admin("PUT", `/skills/${skill}`, { description: "ok", servers: { docs }, experts: [askDocs] }, { "if-match": "1" });
    expect(fresh).toMatchObject({ status: 200, body: { version: 2 } });
  });
});

describe("servers of a skill", () => {
  it("adds with 201, refuses a duplicate with 409, updates and reports a missing one with 404", async () => {
    const skill = await newSkill("servers");
    const added = await admin("POST", `/skills/${skill}/servers`, { id: "fs", url: "https://fs.example.com/mcp" });
    expect(added).toMatchObject({ status: 201, body: { skill, version: 2, server: "fs" } });
    expect((await admin("POST", `/skills/${skill}/servers`, { id: "fs", url: "https://other.example.com/mcp" })).status).toBe(409);
    const updated = await admin("PUT", `/skills/${skill}/servers/fs`, { url: "https://fs2.example.com/mcp", transport: "sse" });
    expect(updated).toMatchObject({ status: 200, body: { version: 3 } });
    expect((await admin("GET", `/skills/${skill}`)).body).toMatchObject({
      config: { servers: { fs: { url: "https://fs2.example.com/mcp", transport: "sse" } } },
    });
    expect((await admin("PUT", `/skills/${skill}/servers/nope`, { url: "https://x.example.com/mcp" })).status).toBe(404);
    expect((await admin("POST", `/skills/${uniqueSkill("absent")}/servers`, { id: "fs", url: "https://x.example.com/mcp" })).status).toBe(404);
  });

  it("reports problems at paths into the server that was sent, the id at $.id", async () => {
    const skill = await newSkill("server-paths");
    const answer = await admin("POST", `/skills/${skill}/servers`, {
      id: "Bad__Id",
      url: "ftp://x",
      transprot: "sse",
      headers: { "X-Api-Key": "sk-live-123456789012345678901234" },
    });
    expect(answer.status).toBe(400);
    expect(paths(answer.problems)).toEqual(expect.arrayContaining(["$.id", "$.url", "$.transprot", "$.headers.X-Api-Key"]));
    expect(JSON.stringify(answer.body)).not.toContain("sk-live-123456789012345678901234");
  });

  it("refuses to delete a server experts still use (409 naming them) and deletes an unused one", async () => {
    const skill = await newSkill("server-delete");
    const inUse = await admin("DELETE", `/skills/${skill}/servers/docs`);
    expect(inUse.status).toBe(409);
    expect(paths(inUse.problems)).toEqual([`$.skills.${skill}.experts[0].internal_tools.docs`]);
    await admin("POST", `/skills/${skill}/servers`, { id: "spare", url: "https://spare.example.com/mcp" });
    expect(await admin("DELETE", `/skills/${skill}/servers/spare`)).toMatchObject({ status: 200, body: { deleted: true, version: 3 } });
  });
});

describe("experts of a skill", () => {
  it("adds with 201, refuses a duplicate name with 409, renames and deletes", async () => {
    const skill = await newSkill("experts");
    const second = { name: "summarize", description: "Summarizes a page.", internal_tools: { docs: ["read"] } };
    expect(await admin("POST", `/skills/${skill}/experts`, second)).toMatchObject({ status: 201, body: { version: 2, expert: "summarize" } });
    expect((await admin("POST", `/skills/${skill}/experts`, { ...second, description: "again" })).status).toBe(409);
    expect((await admin("PUT", `/skills/${skill}/experts/summarize`, { ...second, name: "ask_docs" })).status).toBe(409);
    expect(await admin("PUT", `/skills/${skill}/experts/summarize`, { ...second, name: "summarise" })).toMatchObject({
      status: 200,
      body: { expert: "summarise" },
    });
    expect((await admin("PUT", `/skills/${skill}/experts/summarize`, second)).status).toBe(404);
    expect(await admin("DELETE", `/skills/${skill}/experts/summarise`)).toMatchObject({ status: 200, body: { deleted: true } });
    const names = ((await admin("GET", `/skills/${skill}`)).body.config as { experts: { name: string }[] }).experts.map((e) => e.name);
    expect(names).toEqual(["ask_docs"]);
  });

  it("takes the name from the URL when the body leaves it out, and reports problems at paths into the expert", async () => {
    const skill = await newSkill("expert-paths");
    const ok = await admin("PUT", `/skills/${skill}/experts/ask_docs`, { description: "Better answers.", internal_tools: { docs: ["search"] } });
    expect(ok).toMatchObject({ status: 200, body: { expert: "ask_docs", version: 2 } });
    const bad = await admin("POST", `/skills/${skill}/experts`, {
      name: "x",
      description: "d",
      provider: "openai",
      budget: { max_steps: 0 },
      internal_tools: { web: ["get"] },
    });
    expect(bad.status).toBe(400);
    expect(paths(bad.problems)).toEqual(expect.arrayContaining(["$.provider", "$.budget.max_steps", "$.internal_tools.web"]));
  });
});
