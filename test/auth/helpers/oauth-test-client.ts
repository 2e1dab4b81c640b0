import { z } from "zod";
import { s256Challenge, randomToken } from "../../../src/auth/pkce";
import type { TestWorker } from "./auth-test-worker";

const tokenResponseSchema = z.object({
  access_token: z.string(),
  refresh_token: z.string().optional(),
  token_type: z.string(),
  expires_in: z.number(),
  scope: z.string().optional(),
});
export type TokenResponse = z.infer<typeof tokenResponseSchema>;
const asMetadataSchema = z.object({
  issuer: z.string(),
  authorization_endpoint: z.string(),
  token_endpoint: z.string(),
  registration_endpoint: z.string(),
  code_challenge_methods_supported: z.array(z.string()),
});
const prmSchema = z.object({ resource: z.string(), authorization_servers: z.array(z.string()).min(1) });

/** Cookies the way a browser keeps them, enough for the consent and upstream binding cookies. */
export class CookieJar {
  private readonly cookies = new Map<string, string>();
  take(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair = ""] = line.split(";");
      const at = pair.indexOf("=");
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      if (/max-age=0/i.test(line) || value === "") this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
  }
}

export interface Discovery {
  resource: string;
  metadata: z.infer<typeof asMetadataSchema>;
}

/** What an MCP client does from a bare 401 (MCP authorization: discovery). */
export async function discover(worker: TestWorker, mcpUrl: string): Promise<Discovery> {
  const challenge = await worker.fetch(mcpUrl, { method: "POST", body: "{}" });
  if (challenge.status !== 401) throw new Error(`expected 401, got ${challenge.status}`);
  const header = challenge.headers.get("WWW-Authenticate") ?? "";
  const prmUrl = /resource_metadata="([^"]+)"/.exec(header)?.[1];
  if (!prmUrl) throw new Error(`no resource_metadata in ${header}`);
  const prm = prmSchema.parse(await (await worker.fetch(prmUrl)).json());
  const issuer = prm.authorization_servers[0] ?? "";
  const metadata = asMetadataSchema.parse(await (await worker.fetch(`${issuer}/.well-known/oauth-authorization-server`)).json());
  return { resource: prm.resource, metadata };
}

export async function register(worker: TestWorker, discovery: Discovery, redirectUris: string[]): Promise<string> {
  const response = await worker.fetch(discovery.metadata.registration_endpoint, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      client_name: "Test MCP Client",
      redirect_uris: redirectUris,
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
    }),
  });
  if (response.status !== 201) throw new Error(`registration ${response.status}: ${await response.text()}`);
  return z.object({ client_id: z.string() }).parse(await response.json()).client_id;
}

export interface AuthorizeInput {
  clientId: string;
  redirectUri: string;
  verifier?: string;
  method?: string;
  resource?: string;
}

export interface BrowserSession {
  jar: CookieJar;
  consent: Response;
  handle: string;
}

export function authorizeUrl(discovery: Discovery, input: AuthorizeInput, challenge: string): string {
  const url = new URL(discovery.metadata.authorization_endpoint);
  url.searchParams.set("response_type", "code");
  url.searchParams.set("client_id", input.clientId);
  url.searchParams.set("redirect_uri", input.redirectUri);
  url.searchParams.set("state", "client-state-1");
  url.searchParams.set("code_challenge", challenge);
  url.searchParams.set("code_challenge_method", input.method ?? "S256");
  url.searchParams.set("resource", input.resource ?? discovery.resource);
  url.searchParams.set("scope", "mcp");
  return url.toString();
}

/** The browser opens /authorize and gets the consent page. */
export async function openConsent(worker: TestWorker, discovery: Discovery, input: AuthorizeInput, verifier: string): Promise<BrowserSession> {
  const jar = new CookieJar();
  const challenge = input.method === "plain" ? verifier : await s256Challenge(verifier);
  const consent = await worker.fetch(authorizeUrl(discovery, input, challenge));
  jar.take(consent);
  const html = consent.status === 200 ? await consent.clone().text() : "";
  const handle = /name="handle" value="([^"]+)"/.exec(html)?.[1] ?? "";
  return { jar, consent, handle };
}

export async function postConsent(worker: TestWorker, origin: string, session: BrowserSession, decision = "approve", withCookie = true): Promise<Response> {
  const response = await worker.fetch(`${origin}/authorize`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", ...(withCookie ? { Cookie: session.jar.header() } : {}) },
    body: new URLSearchParams({ handle: session.handle, decision }).toString(),
  });
  session.jar.take(response);
  return response;
}

export async function followUpstream(worker: TestWorker, session: BrowserSession, location: string): Promise<Response> {
  const response = await worker.fetch(location, { headers: { Cookie: session.jar.header() } });
  session.jar.take(response);
  return response;
}

export interface CodeResult {
  code: string;
  redirect: URL;
  verifier: string;
  callback: string;
}

/** Consent → (dev) upstream → callback: the full browser leg, returning the client's code. */
export async function authorizeThroughDev(worker: TestWorker, discovery: Discovery, input: AuthorizeInput): Promise<CodeResult> {
  const verifier = input.verifier ?? randomToken();
  const session = await openConsent(worker, discovery, input, verifier);
  if (session.consent.status !== 200) throw new Error(`consent ${session.consent.status}: ${await session.consent.text()}`);
  const approved = await postConsent(worker, new URL(discovery.metadata.issuer).origin, session);
  const upstream = approved.headers.get("Location") ?? "";
  const callback = await followUpstream(worker, session, upstream);
  const location = callback.headers.get("Location");
  if (callback.status !== 302 || !location) throw new Error(`callback ${callback.status}: ${await callback.text()}`);
  const redirect = new URL(location);
  return { code: redirect.searchParams.get("code") ?? "", redirect, verifier, callback: upstream };
}

export async function tokenRequest(worker: TestWorker, discovery: Discovery, params: Record<string, string>): Promise<Response> {
  return worker.fetch(discovery.metadata.token_endpoint, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(params).toString(),
  });
}

export async function exchangeCode(
  worker: TestWorker,
  discovery: Discovery,
  clientId: string,
  redirectUri: string,
  result: CodeResult,
): Promise<TokenResponse> {
  const response = await tokenRequest(worker, discovery, {
    grant_type: "authorization_code",
    code: result.code,
    redirect_uri: redirectUri,
    client_id: clientId,
    code_verifier: result.verifier,
    resource: discovery.resource,
  });
  if (response.status !== 200) throw new Error(`token ${response.status}: ${await response.text()}`);
  return tokenResponseSchema.parse(await response.json());
}

export async function refresh(worker: TestWorker, discovery: Discovery, clientId: string, refreshToken: string): Promise<Response> {
  return tokenRequest(worker, discovery, { grant_type: "refresh_token", refresh_token: refreshToken, client_id: clientId });
}

export function parseTokens(body: unknown): TokenResponse {
  return tokenResponseSchema.parse(body);
}

/** Register, authorize as the dev user and exchange: a signed-in client in one call. */
export async function signIn(worker: TestWorker, mcpUrl: string, redirectUri = "https://claude.ai/api/mcp/auth_callback") {
  const discovery = await discover(worker, mcpUrl);
  const clientId = await register(worker, discovery, [redirectUri]);
  const code = await authorizeThroughDev(worker, discovery, { clientId, redirectUri });
  const tokens = await exchangeCode(worker, discovery, clientId, redirectUri, code);
  return { discovery, clientId, tokens };
}

/** The browser leg for an authorization URL a real client built: consent, approve, dev sign-in. */
export async function browserSignIn(worker: TestWorker, authorizationUrl: string): Promise<URL> {
  const jar = new CookieJar();
  const consent = await worker.fetch(authorizationUrl);
  jar.take(consent);
  const handle = /name="handle" value="([^"]+)"/.exec(await consent.text())?.[1] ?? "";
  const session: BrowserSession = { jar, consent, handle };
  const approved = await postConsent(worker, new URL(authorizationUrl).origin, session);
  const callback = await followUpstream(worker, session, approved.headers.get("Location") ?? "");
  return new URL(callback.headers.get("Location") ?? "");
}

/** The code in a callback's redirect to the client, exchanged for tokens with the verifier of its PKCE pair. */
export async function exchangeCallbackCode(
  worker: TestWorker,
  discovery: Discovery,
  clientId: string,
  redirectUri: string,
  callback: Response,
  verifier: string,
): Promise<TokenResponse> {
  const redirect = new URL(callback.headers.get("Location") ?? "");
  return exchangeCode(worker, discovery, clientId, redirectUri, { code: redirect.searchParams.get("code") ?? "", redirect, verifier, callback: "" });
}
