import { describe, expect, it } from "vitest";
import { landingPath, safeReturnPath } from "../../src/dashboard/return-path";
import { dashboardFetch, oauthVars } from "./dashboard-test-client";

const FLOW = "b".repeat(32);

/** Paths a connect page sends to sign-in (connect-routes.ts signInFirst), to be returned to as they are. */
const CONNECT_PAGES = [
  "/connect",
  "/connect?ended=crm.example",
  `/connect/${FLOW}`,
  `/connect/team/${FLOW}`,
  "/connect/callback?state=s-1&code=c_2.3~x&iss=https%3A%2F%2Fauth.example%2F",
];

/** Open redirects and their disguises: another origin, a path the browser normalises elsewhere, encoded separators. */
const ATTACKS = [
  "https://evil.example/connect/x",
  "http://127.0.0.1:9/connect",
  "//evil.example/connect",
  "///evil.example/connect",
  "/\\evil.example/connect",
  "\\\\evil.example/connect",
  "/connect\\..\\admin",
  "/connect/\\\\evil.example",
  "/\t/evil.example/connect",
  "/connect/x\nLocation: https://evil.example",
  " /connect",
  "javascript:alert(1)//connect",
  "connect",
  "%2F%2Fevil.example/connect",
  "/%2F%2Fevil.example/connect",
  "/connect/%2F%2Fevil.example",
  "/connect/%5C%5Cevil.example",
  "/connect/..%2F..%2Fadmin",
  "/connect/%2e%2e/admin",
  "/connect/%252F%252Fevil.example",
  "/connect/../admin",
  "/connect/./x/../../admin",
  "/connect/x#https://evil.example",
  "/connect/ü",
  "/connectevil.example",
  "/admin",
  "/admin/members",
  "/",
  `/connect/${"a".repeat(2100)}`,
  "",
];

function cookiePairs(response: Response): string[] {
  return response.headers.getSetCookie().map((line) => line.split(";")[0] ?? "");
}

/** The dev sign-in of `login` started with `next` (as the sign-in page's link carries it): where the callback sends the browser. */
async function landingAfterSignIn(login: string, next?: string): Promise<string> {
  const query = new URLSearchParams({ login, ...(next === undefined ? {} : { next }) });
  const start = await dashboardFetch(`/admin/login/start?${query}`);
  expect(start.status).toBe(302);
  const authorize = new URL(start.headers.get("location") ?? "");
  const callback = await dashboardFetch(`${authorize.pathname}${authorize.search}`, { headers: { cookie: cookiePairs(start).join("; ") } });
  expect(callback.status).toBe(302);
  return callback.headers.get("location") ?? "";
}

describe("where sign-in sends the browser back (return-path.ts)", () => {
  it("keeps every connect page, query included", () => {
    for (const path of CONNECT_PAGES) expect(safeReturnPath(path), path).toBe(path);
  });

  it("refuses other origins, paths the browser would normalise elsewhere, encoded separators and pages outside /connect", () => {
    for (const attack of ATTACKS) expect(safeReturnPath(attack), JSON.stringify(attack.slice(0, 80))).toBeUndefined();
    expect(safeReturnPath(undefined)).toBeUndefined();
  });

  it("lands an admin on the dashboard and a member on their connections", () => {
    expect([landingPath("admin"), landingPath("member")]).toEqual(["/admin", "/connect"]);
  });
});

describe("dashboard sign-in for members and admins (the whole Worker)", () => {
  it("sends a member back to the connect page that sent them to sign in", async () => {
    for (const path of CONNECT_PAGES) expect(await landingAfterSignIn("bob", path), path).toBe(path);
  });

  it("lands a member who came on their own on their connections, an admin on the dashboard", async () => {
    expect(await landingAfterSignIn("bob")).toBe("/connect");
    expect(await landingAfterSignIn("alice")).toBe("/admin");
    expect(await landingAfterSignIn("alice", `/connect/team/${FLOW}`)).toBe(`/connect/team/${FLOW}`);
  });

  it("never redirects to an attacker's return path: the member lands on their connections instead", async () => {
    for (const attack of ATTACKS.filter((attack) => attack.length < 200))
      expect(await landingAfterSignIn("bob", attack), JSON.stringify(attack)).toBe("/connect");
  });

  it("carries only a safe return path in the sign-in page's links", async () => {
    for (const attack of ATTACKS.filter((attack) => attack.length < 200)) {
      const page = await (await dashboardFetch(`/admin/login?${new URLSearchParams({ next: attack })}`)).text();
      expect(page, JSON.stringify(attack)).not.toContain("next=");
    }
    const page = await (await dashboardFetch(`/admin/login?${new URLSearchParams({ next: `/connect/${FLOW}` })}`)).text();
    expect(page).toContain(`next=${encodeURIComponent(`/connect/${FLOW}`)}`);
  });

  it("speaks to whoever signs in: Slipsnisse, not its admin dashboard, and where each kind of user goes", async () => {
    const plain = await (await dashboardFetch("/admin/login")).text();
    expect(plain).not.toContain("Slipsnisse admin");
    expect(plain).toContain("Sign in to Slipsnisse");
    expect(plain).toContain("every member reaches their own connections");
    const fromConnect = await (await dashboardFetch(`/admin/login?${new URLSearchParams({ next: `/connect/${FLOW}` })}`)).text();
    expect(fromConnect).not.toContain("Slipsnisse admin");
    expect(fromConnect).toContain("you come back to it once you are signed in");
  });

  it("names Slipsnisse, not its admin dashboard, when a sign-in fails", async () => {
    const expired = await dashboardFetch("/admin/login/callback?state=nothing-started&code=x", {}, oauthVars);
    expect(expired.status).toBe(400);
    expect(await expired.text()).not.toContain("Slipsnisse admin");
  });
});
