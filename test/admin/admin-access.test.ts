import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { listVersions } from "../../src/catalog/catalog-store";
import { uniqueSkill } from "../catalog/catalog-test-data";
import { adminAs } from "./admin-test-client";

// Not a loopback host: the dev user does not apply, so only a grant or the token gets in.
const PUBLIC = "https://slipsnisse.example.com/admin/api";
const TOKEN = "adm-test-7f3c9a1e";

describe("who may use the admin API", () => {
  it("answers 401 without a grant, token or loopback dev user", async () => {
    const response = await adminAs(new Request(`${PUBLIC}/skills`));
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: expect.stringContaining("ADMIN_TOKEN") });
  });

  it("accepts the ADMIN_TOKEN secret as a bearer token and refuses any other token", async () => {
    const good = await adminAs(new Request(`${PUBLIC}/skills`, { headers: { authorization: `Bearer ${TOKEN}` } }), { vars: { ADMIN_TOKEN: TOKEN } });
    expect(good.status).toBe(200);
    const bad = await adminAs(new Request(`${PUBLIC}/skills`, { headers: { authorization: `Bearer ${TOKEN}x` } }), { vars: { ADMIN_TOKEN: TOKEN } });
    expect(bad.status).toBe(401);
    expect(await bad.text()).not.toContain(TOKEN);
  });

  it("answers 403 to a signed-in member who is not an admin", async () => {
    const response = await adminAs(new Request(`${PUBLIC}/skills`), { props: { userId: "gh:2", login: "bob", role: "member" } });
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ error: "User bob is not an admin of this tenant." });
  });

  it("records the signed-in admin's login as the author of a change", async () => {
    const skill = uniqueSkill("authored");
    const response = await adminAs(
      new Request(`${PUBLIC}/skills/${skill}?note=first%20cut`, { method: "PUT", body: JSON.stringify({ description: "x" }) }),
      { props: { userId: "gh:1", login: "alice", role: "admin" } },
    );
    expect(response.status).toBe(201);
    expect(await listVersions(env.DB, skill)).toMatchObject([{ version: 1, author: "alice", note: "first cut", current: true }]);
  });
});
