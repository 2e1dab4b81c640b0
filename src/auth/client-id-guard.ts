import { messagePage } from "./auth-pages";

/*
 * Client ids are client input: /authorize reads one from the query, /token from the form, the
 * Basic credentials or a client assertion's `iss`. The provider looks each up in KV under
 * `client:<id>`, and KV refuses a key over 512 bytes by throwing, which surfaced as a 500. A URL
 * id is a Client ID Metadata Document, registered from its document first
 * (cimd/client-metadata-document.ts). Ids the provider issues are 16 characters; a CIMD URL is
 * far below this bound in practice.
 */
const MAX_CLIENT_ID_BYTES = 255;

/** Whether a client id can name a client at all; one that cannot gets the unknown client's answer before the provider sees it. */
export function isPlausibleClientId(clientId: string): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses.
  return new TextEncoder().encode(clientId).length <= MAX_CLIENT_ID_BYTES && !/[\u0000-\u001f\u007f]/.test(clientId);
}

/** The client ids a token request names (form, Basic credentials, a client assertion's issuer). */
export async function tokenRequestClientIds(request: Request): Promise<string[]> {
  const ids: string[] = [];
  const basic = /^basic[ \t]+(\S+)\s*$/i.exec(request.headers.get("authorization") ?? "")?.[1];
  if (basic !== undefined) {
    try {
      const credentials = atob(basic);
      const user = credentials.slice(0, Math.max(0, credentials.indexOf(":")));
      ids.push(decodeURIComponent(user.replace(/\+/g, " ")));
    } catch {
      // The provider answers malformed Basic credentials with invalid_client itself.
    }
  }
  if (!(request.headers.get("content-type") ?? "").toLowerCase().includes("application/x-www-form-urlencoded")) return ids;
  const form = new URLSearchParams(await request.clone().text());
  ids.push(...form.getAll("client_id"));
  const assertion = form.get("client_assertion");
  const issuer = assertion === null ? undefined : assertionIssuer(assertion);
  if (issuer !== undefined) ids.push(issuer);
  return ids;
}

function assertionIssuer(assertion: string): string | undefined {
  const payload = assertion.split(".")[1];
  if (payload === undefined) return undefined;
  try {
    const claims: unknown = JSON.parse(atob(payload.replace(/-/g, "+").replace(/_/g, "/")));
    const iss = typeof claims === "object" && claims !== null ? Reflect.get(claims, "iss") : undefined;
    return typeof iss === "string" ? iss : undefined;
  } catch {
    return undefined;
  }
}

/** RFC 6749 §5.2: the answer the provider gives a client it does not know. */
export function invalidClientResponse(): Response {
  return new Response(JSON.stringify({ error: "invalid_client", error_description: "Client not found" }), {
    status: 401,
    headers: { "Content-Type": "application/json", "Cache-Control": "no-store" },
  });
}

/** The page /authorize shows an unknown client (authorization-failure.ts): a local page, never a redirect to its unverified redirect_uri. */
export function unknownClientPage(): Response {
  return messagePage(400, "This sign-in cannot continue", "Invalid client_id. Start the connection again from your MCP client.");
}
