import { z } from "zod";
import { isLoopbackHost } from "./loopback-host";

/**
 * Where a client's redirect URI sends the authorization code:
 * - `web`: an https callback (claude.ai);
 * - `loopback`: a listener on this computer, http on 127.0.0.1, localhost or [::1] (Claude
 *   Code, the MCP Inspector; RFC 8252 §7.3);
 * - `native-app`: a private-use URI scheme an installed app claims (RFC 8252 §7.1), such as
 *   Cursor's `cursor://anysphere.cursor-mcp/oauth/callback`.
 */
export type RedirectKind = "web" | "loopback" | "native-app";

export type RedirectVerdict = { ok: true; kind: RedirectKind } | { ok: false; reason: string };

/**
 * Schemes the browser handles itself instead of handing them to an app: they run script, show
 * content, read local files or open another program (mail, phone). A code sent there would reach
 * whatever the URI names, or be shown in the address bar. RFC 8252 §7.1 asks apps for a
 * reverse-domain scheme, but Cursor's is `cursor:`, so other schemes are not held to that form.
 */
const BROWSER_SCHEMES: ReadonlySet<string> = new Set([
  "javascript",
  "data",
  "file",
  "vbscript",
  "blob",
  "about",
  "filesystem",
  "view-source",
  "mailto",
  "tel",
  "sms",
  "ftp",
  "ws",
  "wss",
  "chrome",
  "chrome-extension",
  "edge",
  "moz-extension",
  "resource",
]);

// RFC 3986 §3.1.
const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/;

/** Whether a code may be sent to `uri`, and how it reaches the client. */
export function judgeRedirectUri(uri: string): RedirectVerdict {
  if (hasStrayCharacter(uri)) return refused("contains whitespace, a control character or a backslash");
  const scheme = SCHEME.exec(uri)?.[1]?.toLowerCase();
  if (!scheme) return refused("is not an absolute URI with a scheme");
  if (BROWSER_SCHEMES.has(scheme)) return refused(`uses the ${scheme}: scheme, which the browser handles itself instead of handing it to your app`);
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return refused("is not a valid URI");
  }
  if (url.username || url.password) return refused("carries a user name or password");
  if (uri.includes("#")) return refused("has a fragment (#), which OAuth redirect URIs must not have");
  if (scheme === "https") return url.hostname ? { ok: true, kind: "web" } : refused("has no host");
  if (scheme === "http") {
    return isLoopbackHost(url.hostname)
      ? { ok: true, kind: "loopback" }
      : refused("uses plain http off this computer; the code would cross the network unencrypted");
  }
  return { ok: true, kind: "native-app" };
}

/** RFC 3986 allows none of these; a parser that trims or drops them would judge another URI. */
function hasStrayCharacter(uri: string): boolean {
  for (const char of uri) {
    const code = char.codePointAt(0) ?? 0;
    if (code <= 0x1f || (code >= 0x7f && code <= 0x9f) || char === "\\" || /\s/.test(char)) return true;
  }
  return false;
}

const FIX =
  "Register an https URL, http://127.0.0.1:<port>/<path> for a listener on the user's computer, or an app's own scheme such as com.example.app:/callback (RFC 8252).";

function refused(why: string): RedirectVerdict {
  return { ok: false, reason: why };
}

// Only the field judged here; the provider parses and validates the rest of the metadata.
const registrationSchema = z.looseObject({ redirect_uris: z.array(z.unknown()) });
/** The provider's own limit on a registration body, and its answer beyond it. */
const MAX_REGISTRATION_BYTES = 1024 * 1024;

/**
 * Dynamic client registration (RFC 7591), judged before the provider sees it: every listed
 * redirect URI must be one a code may be sent to, or the registration is refused with
 * `invalid_redirect_uri` naming the URI and its JSON path. The provider would accept `about:`
 * and, next to one good URI, any other it refuses to send codes to; a client's listed URIs
 * should all be usable, so a mistake shows up at registration, not at sign-in.
 * Returns the request to pass on (its body re-attached) or the refusal.
 */
export async function judgeRegistration(request: Request): Promise<Request | Response> {
  const body = await readBounded(request, MAX_REGISTRATION_BYTES);
  if (body === undefined) return oauthError(413, "invalid_request", `Request payload too large, must be under ${MAX_REGISTRATION_BYTES} bytes`);
  const passOn = new Request(request, { body });
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(body));
  } catch {
    return passOn;
  }
  const metadata = registrationSchema.safeParse(json);
  if (!metadata.success) return passOn;
  for (const [index, uri] of metadata.data.redirect_uris.entries()) {
    if (typeof uri !== "string") continue;
    const verdict = judgeRedirectUri(uri);
    // RFC 7591 §3.2.2.
    if (!verdict.ok) return oauthError(400, "invalid_redirect_uri", `redirect_uris[${index}] ${JSON.stringify(uri)} ${verdict.reason}. ${FIX}`);
  }
  return passOn;
}

/** The body, or undefined once it passes `limit` bytes (read no further: a body may be endless). */
async function readBounded(request: Request, limit: number): Promise<Uint8Array | undefined> {
  if (!request.body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  const body = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    body.set(chunk, at);
    at += chunk.byteLength;
  }
  return body;
}

function oauthError(status: number, error: string, description: string): Response {
  return new Response(JSON.stringify({ error, error_description: description }), {
    status,
    headers: { "Content-Type": "application/json", "Cache-Control": "no-store" },
  });
}

/** A redirect URI at /authorize that no code may be sent to: why, and what the client's developer can do. */
export function refusedAtAuthorization(uri: string): string | undefined {
  const verdict = judgeRedirectUri(uri);
  return verdict.ok ? undefined : `The app's redirect URI ${verdict.reason}. ${FIX}`;
}
