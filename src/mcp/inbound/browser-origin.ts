import { localhostAllowedOrigins, validateOriginHeader } from "@modelcontextprotocol/server";
import { allowedOriginsSchema } from "../../auth/allowed-origins";
import { AuthConfigError } from "../../auth/auth-errors";
import { authVarHelp } from "../../auth/auth-var-help";
import { readSecret } from "../../env";

let cached: { raw: string | undefined; origins: ReadonlySet<string> } | undefined;

/** The tenant's ALLOWED_ORIGINS, parsed once per value; throws AuthConfigError naming the entry. */
function configuredOrigins(env: Env): ReadonlySet<string> {
  const raw = readSecret(env, "ALLOWED_ORIGINS");
  if (cached !== undefined && cached.raw === raw) return cached.origins;
  const parsed = allowedOriginsSchema.safeParse(raw);
  if (!parsed.success) {
    throw new AuthConfigError(
      "ALLOWED_ORIGINS",
      `is invalid (${parsed.error.issues.map((issue) => issue.message).join("; ")})`,
      authVarHelp("ALLOWED_ORIGINS"),
    );
  }
  cached = { raw, origins: new Set(parsed.data) };
  return cached.origins;
}

function normalisedOrigin(origin: string): string | undefined {
  try {
    return new URL(origin).origin;
  } catch {
    return undefined;
  }
}

/**
 * Whether a browser page at the request's `Origin` may call the MCP endpoints. The MCP
 * transport spec requires the Origin check against DNS rebinding; requests without an Origin
 * (every non-browser client) pass. Allowed: the tenant's ALLOWED_ORIGINS, compared exactly
 * (scheme, host, port), and the defaults createMcpHandler applies on its own (localhost-class
 * origins, and the endpoint's own host on workers.dev). The same answer serves the preflight
 * and the request, so a browser is never let through a preflight only to be refused after.
 * Returns the refusal, or undefined when the request may go on.
 */
export function browserOriginRefusal(request: Request, env: Env): Response | undefined {
  const origin = request.headers.get("origin");
  if (origin === null || origin === "") return undefined;
  let configured: ReadonlySet<string>;
  try {
    configured = configuredOrigins(env);
  } catch (error) {
    if (!(error instanceof AuthConfigError)) throw error;
    return Response.json({ error: error.message, fix: error.fix }, { status: 500 });
  }
  const normalised = normalisedOrigin(origin);
  if (normalised !== undefined && configured.has(normalised)) return undefined;
  const hostname = new URL(request.url).hostname;
  const defaults = [...localhostAllowedOrigins(), ...(hostname.endsWith(".workers.dev") ? [hostname] : [])];
  if (validateOriginHeader(origin, defaults).ok) return undefined;
  return Response.json(
    {
      jsonrpc: "2.0",
      error: { code: -32000, message: `Origin ${JSON.stringify(origin)} may not call this server. An admin can allow it by adding it to ALLOWED_ORIGINS.` },
      id: null,
    },
    { status: 403 },
  );
}

/**
 * The CORS preflight for the MCP and SSE paths, answered before sign-in (browsers send no
 * credentials on a preflight). A refused origin gets the refusal without CORS headers, so the
 * browser never sends the request; an allowed one gets the same permissive answer the OAuth
 * provider gives its other routes (bearer tokens are not ambient credentials).
 */
export function mcpPreflight(request: Request, env: Env, allow: string): Response {
  const refusal = browserOriginRefusal(request, env);
  if (refusal) return refusal;
  const origin = request.headers.get("origin");
  const headers = new Headers({ Allow: allow, "Content-Length": "0" });
  if (origin) {
    headers.set("Access-Control-Allow-Origin", origin);
    headers.set("Access-Control-Allow-Methods", "*");
    headers.set("Access-Control-Allow-Headers", "Authorization, *");
    headers.set("Access-Control-Max-Age", "86400");
    headers.set("Vary", "Origin");
  }
  return new Response(null, { status: 204, headers });
}
