import { z } from "zod";
import { readAuthConfig } from "../auth/auth-config";
import { DASHBOARD_SESSION_TTL_SECONDS, type DashboardSessionRef, isDashboardSessionEnded } from "../auth/dashboard-session-revocations";
import { loopbackDevUser } from "../auth/loopback-dev-user";
import { isMemberRemoved } from "../auth/member-removals";
import { currentRole } from "../auth/membership-policy";
import { randomToken } from "../auth/pkce";
import { type Role, userPropsSchema, type UserProps } from "../auth/user-props";
import { base64Url, base64UrlDecode } from "../base64url";
import { isLocalDevelopment, readSecret } from "../env";
import { DashboardSessionKeyMissingError, DashboardSessionKeyWeakError } from "./dashboard-errors";

/**
 * The dashboard's browser session: a cookie holding the signed-in admin's props, signed with
 * HMAC-SHA256. `__Host-` makes the browser refuse it unless Secure, Path=/ and host-only, so no
 * sibling subdomain can plant one; SameSite=Lax keeps it off cross-site POSTs. Nothing secret is
 * inside (props never hold tokens), so it is signed, not encrypted.
 */
export const SESSION_COOKIE = "__Host-slipsnisse-dashboard";
/** The sign-in transaction (state, PKCE verifier, nonce) between /admin/login and its callback. */
export const LOGIN_COOKIE = "__Host-slipsnisse-dashboard-login";

const LOGIN_TTL_SECONDS = 600;
const MIN_KEY_LENGTH = 32;

// `iat` (ms) dates the session against a revoke of its user; cookies from before it had none.
const sessionSchema = z.object({ user: userPropsSchema, sid: z.string().min(16), iat: z.number().int().optional(), exp: z.number().int() });
export type DashboardSession = z.infer<typeof sessionSchema>;

const loginSchema = z.object({
  state: z.string().min(16),
  verifier: z.string().min(43),
  nonce: z.string().min(16),
  login: z.string().optional(),
  /** Where to go after sign-in: only a connect page (connect-routes.ts) asks for one. */
  next: z.string().optional(),
  exp: z.number().int(),
});
export type LoginTransaction = z.infer<typeof loginSchema>;

// `npm start -- --no-auth` may run without any secret; its sessions then last as long as the isolate.
let localFallbackKey: string | undefined;

/**
 * DASHBOARD_SESSION_KEY when set; otherwise a key derived from ADMIN_TOKEN (HMAC with a fixed
 * label, so the cookie signature never reveals the token itself); otherwise an error naming the fix.
 */
async function signingKey(env: Env): Promise<CryptoKey> {
  const explicit = readSecret(env, "DASHBOARD_SESSION_KEY");
  if (explicit !== undefined && explicit.length < MIN_KEY_LENGTH) throw new DashboardSessionKeyWeakError(explicit.length);
  let material = explicit;
  if (material === undefined) {
    const adminToken = readSecret(env, "ADMIN_TOKEN");
    if (adminToken !== undefined) material = base64Url(await hmac(await importKey(adminToken), "slipsnisse dashboard session key v1"));
  }
  if (material === undefined && isLocalDevelopment(env) && env.AUTH === "none") {
    localFallbackKey ??= randomToken();
    material = localFallbackKey;
  }
  if (material === undefined) throw new DashboardSessionKeyMissingError();
  return importKey(material);
}

function importKey(material: string): Promise<CryptoKey> {
  return crypto.subtle.importKey("raw", new TextEncoder().encode(material), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
}

async function hmac(key: CryptoKey, text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(text)));
}

async function sign(env: Env, value: unknown): Promise<string> {
  const body = base64Url(new TextEncoder().encode(JSON.stringify(value)));
  return `${body}.${base64Url(await hmac(await signingKey(env), body))}`;
}

async function verify(env: Env, cookie: string): Promise<unknown> {
  const [body, signature, extra] = cookie.split(".");
  if (!body || !signature || extra !== undefined) return undefined;
  const key = await signingKey(env);
  const expected = await hmac(key, body);
  const presented = fromBase64Url(signature);
  if (presented === undefined || presented.length !== expected.length) return undefined;
  if (!crypto.subtle.timingSafeEqual(presented, expected)) return undefined;
  const bytes = fromBase64Url(body);
  if (bytes === undefined) return undefined;
  try {
    return JSON.parse(new TextDecoder().decode(bytes)) as unknown;
  } catch {
    return undefined;
  }
}

function fromBase64Url(text: string): Uint8Array | undefined {
  return /^[A-Za-z0-9_-]+$/.test(text) && text.length % 4 !== 1 ? base64UrlDecode(text) : undefined;
}

export function readCookie(request: Request, name: string): string | undefined {
  for (const part of (request.headers.get("cookie") ?? "").split(";")) {
    const [key, ...rest] = part.trim().split("=");
    if (key === name) return rest.join("=");
  }
  return undefined;
}

function cookieHeader(name: string, value: string, maxAge: number): string {
  return `${name}=${value}; Path=/; Max-Age=${maxAge}; HttpOnly; Secure; SameSite=Lax`;
}

export function clearCookie(name: string): string {
  return cookieHeader(name, "", 0);
}

/** The cookie as signed: says nothing of sign-out, revocation or today's role; only signedInSession reads it. */
async function readSignedSession(request: Request, env: Env): Promise<DashboardSession | undefined> {
  const cookie = readCookie(request, SESSION_COOKIE);
  if (cookie === undefined) return undefined;
  const parsed = sessionSchema.safeParse(await verify(env, cookie));
  if (!parsed.success || parsed.data.exp * 1000 < Date.now()) return undefined;
  return parsed.data;
}

/** A live dashboard session; `setCookie` when it was just made for the loopback dev user. */
export interface SignedIn {
  session: DashboardSession;
  setCookie?: string;
}

/**
 * The one way any route reads the dashboard cookie (the admin pages, the live socket, the connect
 * pages): a session signed out, revoked by an admin or of a removed member is none, and its role
 * is the one ADMIN_USERS gives now, not the one signed into the cookie, so an admin taken off the
 * list loses the team's powers at the next request rather than when the 8-hour cookie ends
 * (issue 34). The cookie is signed, not stored, so without these checks a copy of it would keep
 * working. Under `--no-auth` the loopback dev user gets a fresh session instead.
 */
export async function signedInSession(request: Request, env: Env): Promise<SignedIn | undefined> {
  const signed = await readSignedSession(request, env);
  const loopback = loopbackDevUser(request, env);
  if (signed && !(await sessionEnded(env, signed))) {
    return { session: { ...signed, user: { ...signed.user, role: roleNow(env, signed.user, loopback !== null) } } };
  }
  return loopback ? newSession(env, loopback) : undefined;
}

async function sessionEnded(env: Env, session: DashboardSession): Promise<boolean> {
  const [removed, ended] = await Promise.all([isMemberRemoved(env, session.user.userId), isDashboardSessionEnded(env, sessionRef(session))]);
  return removed || ended;
}

/**
 * Same names as every sign-in (membership-policy.ts), never an OIDC preferred_username. A config
 * that cannot be read gives no admin (fail closed); the loopback dev admin is one by construction.
 */
function roleNow(env: Env, user: UserProps, loopback: boolean): Role {
  if (user.role !== "admin") return user.role;
  if (loopback && user.userId === "local:dev") return "admin";
  try {
    return currentRole(readAuthConfig(env), user);
  } catch {
    return "member";
  }
}

/** The session as the server-side revocation marks know it (src/auth/dashboard-session-revocations.ts). */
export function sessionRef(session: DashboardSession): DashboardSessionRef {
  return { sid: session.sid, userId: session.user.userId, issuedAt: session.iat ?? (session.exp - DASHBOARD_SESSION_TTL_SECONDS) * 1000, exp: session.exp };
}

export async function newSession(env: Env, user: UserProps): Promise<{ session: DashboardSession; setCookie: string }> {
  const now = Date.now();
  const session: DashboardSession = { user, sid: randomToken(), iat: now, exp: Math.floor(now / 1000) + DASHBOARD_SESSION_TTL_SECONDS };
  return { session, setCookie: cookieHeader(SESSION_COOKIE, await sign(env, session), DASHBOARD_SESSION_TTL_SECONDS) };
}

export async function newLoginTransaction(env: Env, login: string | undefined, next?: string): Promise<{ transaction: LoginTransaction; setCookie: string }> {
  const transaction: LoginTransaction = {
    state: randomToken(),
    verifier: randomToken(),
    nonce: randomToken(),
    ...(login === undefined ? {} : { login }),
    ...(next === undefined ? {} : { next }),
    exp: Math.floor(Date.now() / 1000) + LOGIN_TTL_SECONDS,
  };
  return { transaction, setCookie: cookieHeader(LOGIN_COOKIE, await sign(env, transaction), LOGIN_TTL_SECONDS) };
}

export async function readLoginTransaction(request: Request, env: Env): Promise<LoginTransaction | undefined> {
  const cookie = readCookie(request, LOGIN_COOKIE);
  if (cookie === undefined) return undefined;
  const parsed = loginSchema.safeParse(await verify(env, cookie));
  if (!parsed.success || parsed.data.exp * 1000 < Date.now()) return undefined;
  return parsed.data;
}

/** The CSRF token of a session: an HMAC of its id, so a page from another session's cookie cannot forge it. */
export async function csrfToken(env: Env, session: DashboardSession): Promise<string> {
  return base64Url(await hmac(await signingKey(env), `csrf:${session.sid}`));
}

export async function csrfTokenMatches(env: Env, session: DashboardSession, presented: string | undefined): Promise<boolean> {
  if (presented === undefined) return false;
  const expected = new TextEncoder().encode(await csrfToken(env, session));
  const given = new TextEncoder().encode(presented);
  return given.length === expected.length && crypto.subtle.timingSafeEqual(given, expected);
}
