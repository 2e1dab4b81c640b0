import { describe, expect, it } from "vitest";
import { csrfIn, dashboardFetch, form, ORIGIN, oauthVars, signInAs } from "./dashboard-test-client";

/** Two admins (alice, carol) and a member (bob); ADMIN_TOKEN for the admin API's revoke. */
const vars = { ...oauthVars, DEV_USERS: "alice,bob,carol", ADMIN_USERS: "alice,carol", ADMIN_TOKEN: "sessions-test-admin-token-0123456789" };

const upgrade = (cookie: string): RequestInit => ({ headers: { upgrade: "websocket", origin: ORIGIN, cookie } });
const clearsSession = (response: Response) => response.headers.getSetCookie().some((line) => /^__Host-slipsnisse-dashboard=;/.test(line));

/** The promise's value, or a failure naming what never happened (a bound, not a wait). */
function within<T>(what: string, promise: Promise<T>, ms = 5_000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | null = null;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => {
    if (timer !== null) clearTimeout(timer);
  });
}

/** An open live socket; resolves with the close code when the server closes it. */
async function openLiveSocket(cookie: string): Promise<{ closed: Promise<number>; ws: WebSocket }> {
  const response = await dashboardFetch("/admin/live/socket", upgrade(cookie), vars);
  expect(response.status).toBe(101);
  const ws = response.webSocket;
  if (!ws) throw new Error("no WebSocket");
  const closed = new Promise<number>((resolve) => ws.addEventListener("close", (event) => resolve(event.code)));
  const first = new Promise<void>((resolve) => ws.addEventListener("message", () => resolve(), { once: true }));
  ws.accept();
  await first;
  return { closed, ws };
}

describe("dashboard sessions end on the server (issue 18, defect 5)", () => {
  it("refuses the old cookie after sign-out, on pages and on the live socket, and closes that session's open socket", async () => {
    const cookie = await signInAs("alice", vars);
    const other = await signInAs("alice", vars);
    const page = await dashboardFetch("/admin", { headers: { cookie } }, vars);
    expect(page.status).toBe(200);
    const socket = await openLiveSocket(cookie);
    const otherSocket = await openLiveSocket(other);

    const out = await dashboardFetch("/admin/logout", form({ csrf: csrfIn(await page.text()) }, cookie), vars);
    expect(out.status).toBe(303);
    expect(await within("the signed-out session's socket to close", socket.closed)).toBe(4003);

    const again = await dashboardFetch("/admin", { headers: { cookie } }, vars);
    expect(again.status).toBe(302);
    expect(again.headers.get("location")).toBe("/admin/login");
    expect(clearsSession(again)).toBe(true);
    expect((await dashboardFetch("/admin/live/socket", upgrade(cookie), vars)).status).toBe(401);
    const post = await dashboardFetch("/admin/logout", form({ csrf: "anything" }, cookie), vars);
    expect(post.status).toBe(401);

    // Another session of the same admin (another browser) is untouched.
    expect((await dashboardFetch("/admin", { headers: { cookie: other } }, vars)).status).toBe(200);
    const answered = new Promise<void>((resolve) => otherSocket.ws.addEventListener("message", () => resolve(), { once: true }));
    otherSocket.ws.send("snapshot");
    await within("the other session's socket to answer", answered);
    otherSocket.ws.close(1000, "done");
  });

  it("ends every dashboard session of a member revoked on the members page, its live socket included; a new sign-in works", async () => {
    const alice = await signInAs("alice", vars);
    const carol = await signInAs("carol", vars);
    expect((await dashboardFetch("/admin", { headers: { cookie: carol } }, vars)).status).toBe(200);
    const socket = await openLiveSocket(carol);

    const members = await dashboardFetch("/admin/members", { headers: { cookie: alice } }, vars);
    const revoke = await dashboardFetch("/admin/members/dev-carol/revoke", form({ csrf: csrfIn(await members.text()), confirmed: "yes" }, alice), vars);
    expect(revoke.status).toBe(303);
    expect(await within("carol's socket to close", socket.closed)).toBe(4003);

    const refused = await dashboardFetch("/admin", { headers: { cookie: carol } }, vars);
    expect(refused.status).toBe(302);
    expect(clearsSession(refused)).toBe(true);
    expect((await dashboardFetch("/admin/live/socket", upgrade(carol), vars)).status).toBe(401);
    // The revoking admin's own session goes on.
    expect((await dashboardFetch("/admin", { headers: { cookie: alice } }, vars)).status).toBe(200);
    // Revoke ends what exists; carol is still on ADMIN_USERS and may sign in again.
    const fresh = await signInAs("carol", vars);
    expect((await dashboardFetch("/admin", { headers: { cookie: fresh } }, vars)).status).toBe(200);
  });

  it("ends them on the admin API's revoke too", async () => {
    const carol = await signInAs("carol", vars);
    expect((await dashboardFetch("/admin", { headers: { cookie: carol } }, vars)).status).toBe(200);
    const revoke = await dashboardFetch(
      "/admin/api/members/dev-carol/revoke",
      { method: "POST", headers: { Authorization: `Bearer ${vars.ADMIN_TOKEN}` } },
      vars,
    );
    expect(revoke.status).toBe(200);
    expect((await dashboardFetch("/admin", { headers: { cookie: carol } }, vars)).status).toBe(302);
    expect((await dashboardFetch("/admin/live/socket", upgrade(carol), vars)).status).toBe(401);
  });
});

describe("a refused request clears the session cookie only when it sent one (issue 18, defect 6)", () => {
  it("answers another site's cookie-less POST with 401 and no Set-Cookie, so it cannot sign the admin out", async () => {
    const cookie = await signInAs("alice", vars);
    const crossSite = await dashboardFetch(
      "/admin/logout",
      { method: "POST", body: "x=1", headers: { "content-type": "application/x-www-form-urlencoded", origin: "https://evil.example" } },
      vars,
    );
    expect(crossSite.status).toBe(401);
    expect(crossSite.headers.getSetCookie()).toEqual([]);
    expect((await dashboardFetch("/admin", { headers: { cookie } }, vars)).status).toBe(200);
    // A GET without a cookie is sent to sign in, also without clearing anything.
    const signedOut = await dashboardFetch("/admin/skills", {}, vars);
    expect(signedOut.status).toBe(302);
    expect(signedOut.headers.getSetCookie()).toEqual([]);
  });

  it("clears a cookie that was sent and failed", async () => {
    const forged = await dashboardFetch("/admin/logout", form({ csrf: "anything" }, "__Host-slipsnisse-dashboard=not.valid"), vars);
    expect(forged.status).toBe(401);
    expect(clearsSession(forged)).toBe(true);
  });
});
