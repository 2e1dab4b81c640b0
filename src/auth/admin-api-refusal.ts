import { z } from "zod";
import { isLocalDevelopment } from "../env";

export const ADMIN_API_PREFIX = "/admin/api/";

/** Where `npm start` leaves its admin token for the CLI (git-ignored, mode 0600). */
export const LOCAL_ADMIN_TOKEN_FILE = ".wrangler/slipsnisse-admin.json";

const adminRefusalSchema = z.object({ error: z.string(), fix: z.string() });
const oauthErrorSchema = z.object({ error: z.string(), error_description: z.string().optional() });

/**
 * The OAuth provider refuses API requests the RFC 6750 way: an empty 401 or a bare
 * `{error: "invalid_token"}`. The admin API promises `{error, fix}` to people and the CLI, so a
 * refusal on its paths is rewritten, keeping status and WWW-Authenticate for OAuth clients.
 * The MCP endpoints keep the provider's answer as is.
 */
export async function withAdminApiRefusal(request: Request, response: Response, env: Env): Promise<Response> {
  if (response.status !== 401 && response.status !== 403) return response;
  if (!new URL(request.url).pathname.startsWith(ADMIN_API_PREFIX)) return response;
  const text = await response.clone().text();
  const parsed = parseJson(text);
  if (adminRefusalSchema.safeParse(parsed).success) return response;
  const oauth = oauthErrorSchema.safeParse(parsed);
  const sentToken = /^Bearer\s+\S/i.test(request.headers.get("Authorization") ?? "");
  const body = refusal(response.status, sentToken, oauth.success ? oauth.data : undefined, isLocalDevelopment(env));
  const headers = new Headers(response.headers);
  headers.set("Content-Type", "application/json");
  headers.delete("Content-Length");
  return new Response(JSON.stringify(body), { status: response.status, headers });
}

function refusal(status: number, sentToken: boolean, oauth: z.infer<typeof oauthErrorSchema> | undefined, local: boolean): { error: string; fix: string } {
  const localHint = local
    ? ` Under \`npm start\`, the CLI reads the token from ${LOCAL_ADMIN_TOKEN_FILE} by itself for a loopback --url; restart \`npm start\` if it is missing.`
    : "";
  if (status === 403) {
    const reason = oauth?.error_description ?? oauth?.error ?? "the token does not allow it";
    return {
      error: `The admin API refused this token (403: ${reason}).`,
      fix: `Use the Worker's ADMIN_TOKEN, or sign in as a user listed in ADMIN_USERS.${localHint}`,
    };
  }
  if (!sentToken) {
    return {
      error: "The admin API needs an admin: no Authorization header was sent.",
      fix: `Send Authorization: Bearer <the Worker's ADMIN_TOKEN> (CLI: --token or SLIPSNISSE_ADMIN_TOKEN), or an admin's OAuth access token.${localHint}`,
    };
  }
  const reason = oauth?.error_description ? ` (${oauth.error_description})` : "";
  return {
    error: `The bearer token is not this Worker's ADMIN_TOKEN and not a valid access token${reason}.`,
    fix: `Send the Worker's ADMIN_TOKEN secret (\`npx wrangler secret put ADMIN_TOKEN\` sets it), or sign in again for a fresh access token.${localHint}`,
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
