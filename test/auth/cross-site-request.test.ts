import { createExecutionContext, env, SELF, waitOnExecutionContext } from "cloudflare:test";
import worker from "../../src/index";
import { describe, expect, it } from "vitest";
import { listVersions } from "../../src/catalog/catalog-store";
import { uniqueSkill } from "../support/catalog-test-data";
import { admin } from "../admin/admin-test-client";

// The tests run with ENVIRONMENT=test and AUTH=none: a request to a loopback host is the local admin.
const BASE = "http://127.0.0.1:8787";
const TOKEN = "adm-xsite-4b1d9e";

async function seedSkill(label: string): Promise<string> {
  const skill = uniqueSkill(label);
  expect((await admin("PUT", `/skills/${skill}`, { description: "first" })).status).toBe(201);
  expect((await admin("PUT", `/skills/${skill}`, { description: "second" })).status).toBe(200);
  return skill;
}

/** What a page's `fetch(url, { method: "POST", mode: "no-cors", body: "…" })` sends: a simple request, no preflight. */
function simplePost(path: string, headers: Record<string, string>, body?: string): Promise<Response> {
  return SELF.fetch(`${BASE}${path}`, {
    method: "POST",
    headers: body === undefined ? headers : { "content-type": "text/plain;charset=UTF-8", ...headers },
    ...(body === undefined ? {} : { body }),
  });
}

describe("AUTH=none refuses cross-site requests on /admin/api and /me/api", () => {
  it("refuses a restore from another origin and from a cross-site fetch, and saves nothing", async () => {
    const skill = await seedSkill("xsite-restore");
    const path = `/admin/api/skills/${skill}/versions/1/restore`;
    const attempts: Array<Record<string, string>> = [
      { origin: "http://127.0.0.1:9999" },
      { origin: "null" },
      { origin: "https://evil.example" },
      { "sec-fetch-site": "cross-site" },
      { "sec-fetch-site": "same-site" },
    ];
    for (const headers of attempts) {
      const response = await simplePost(path, headers);
      expect(response.status, JSON.stringify(headers)).toBe(403);
      expect(await response.json()).toMatchObject({ error: expect.stringContaining("cross-site"), fix: expect.stringContaining("npx slipsnisse") });
    }
    expect(await listVersions(env.DB, skill)).toHaveLength(2);
  });

  it("refuses a cross-site catalog push and a /me/api delete", async () => {
    const catalog = await SELF.fetch(`${BASE}/admin/api/catalog`, {
      method: "PUT",
      headers: { "content-type": "application/json", origin: "http://localhost:5173", "sec-fetch-site": "same-site" },
      body: JSON.stringify({ skills: {} }),
    });
    expect(catalog.status).toBe(403);
    const del = await SELF.fetch(`${BASE}/me/api/skills/default/runs/00000000-0000-4000-8000-000000000000`, {
      method: "DELETE",
      headers: { origin: "http://evil.localhost:8787" },
    });
    expect(del.status).toBe(403);
  });

  it("lets the CLI (no Origin), same-origin pages and typed URLs through", async () => {
    const skill = await seedSkill("xsite-allowed");
    const path = `/admin/api/skills/${skill}/versions/1/restore`;
    expect((await simplePost(path, {})).status).toBe(200);
    expect((await simplePost(path, { origin: BASE, "sec-fetch-site": "same-origin" })).status).toBe(200);
    const typed = await SELF.fetch(`${BASE}/admin/api/skills/${skill}/versions`, { headers: { "sec-fetch-site": "none" } });
    expect(typed.status).toBe(200);
    expect(await listVersions(env.DB, skill)).toHaveLength(4);
  });
});

describe("the admin API and /me/api take JSON bodies only, in every auth mode", () => {
  it("answers 415 to a text/plain catalog push, a form restore and a text/plain /me/api delete, and saves nothing", async () => {
    const skill = await seedSkill("json-only");
    const push = await simplePost("/admin/api/validate", {}, JSON.stringify({ skills: {} }));
    expect(push.status).toBe(415);
    expect(await push.json()).toMatchObject({
      error: 'The request body is "text/plain;charset=UTF-8"; this API takes only application/json.',
      fix: "Send the body as JSON with the header Content-Type: application/json.",
    });
    const catalog = await SELF.fetch(`${BASE}/admin/api/catalog`, {
      method: "PUT",
      headers: { "content-type": "text/plain" },
      body: JSON.stringify({ skills: {} }),
    });
    expect(catalog.status).toBe(415);
    const restore = await SELF.fetch(`${BASE}/admin/api/skills/${skill}/versions/1/restore`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "a=b",
    });
    expect(restore.status).toBe(415);
    const del = await SELF.fetch(`${BASE}/me/api/skills/${skill}/threads/th_x`, { method: "DELETE", headers: { "content-type": "text/plain" }, body: "{}" });
    expect(del.status).toBe(415);
    expect(await listVersions(env.DB, skill)).toHaveLength(2);
  });

  it("refuses a JSON route's body without any Content-Type (a chunked upload)", async () => {
    const skill = uniqueSkill("json-untyped");
    const body = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(JSON.stringify({ description: "x" })));
        controller.close();
      },
    });
    const response = await SELF.fetch(`${BASE}/admin/api/skills/${skill}`, { method: "PUT", body, duplex: "half" } as RequestInit);
    expect(response.status).toBe(415);
  });

  it("refuses a text/plain body with sign-in on too (ADMIN_TOKEN on a public host)", async () => {
    const skill = uniqueSkill("json-token");
    const ctx = createExecutionContext();
    const request = new Request(`https://slipsnisse.example.com/admin/api/skills/${skill}`, {
      method: "PUT",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "text/plain" },
      body: JSON.stringify({ description: "x" }),
    });
    const response = await worker.fetch(request as Parameters<typeof worker.fetch>[0], { ...env, AUTH: "oauth", ADMIN_TOKEN: TOKEN } as Env, ctx);
    await waitOnExecutionContext(ctx);
    expect(response.status).toBe(415);
    expect(await listVersions(env.DB, skill)).toEqual([]);
  });

  it("accepts application/json with a charset", async () => {
    const skill = uniqueSkill("json-charset");
    const response = await SELF.fetch(`${BASE}/admin/api/skills/${skill}`, {
      method: "PUT",
      headers: { "content-type": "Application/JSON; charset=utf-8" },
      body: JSON.stringify({ description: "x" }),
    });
    expect(response.status).toBe(201);
  });
});
