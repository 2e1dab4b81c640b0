import type { UserProps } from "../../auth/user-props";
import { loadSkill } from "../../catalog/compiled-skill-cache";
import { canUseSkill } from "../../catalog/skill-access";
import { accessRefused } from "../inbound/skill-access-gate";
import { browserOriginRefusal } from "../inbound/browser-origin";
import { earlyRefusal } from "../inbound/early-refusals";
import { readBoundedBody } from "../inbound/request-body-limit";
import { PostedBody } from "../inbound/posted-body";
import { sha256Hex } from "../../downstream/canonical-json";

/** `/sse` (default skill) and `/s/<skill>/sse`; messages go to the same path plus `/message`. */
export const SSE_PATH = /^\/(?:s\/([a-z0-9][a-z0-9-]{0,62})\/)?sse(\/message)?$/;

export async function serveLegacySse(request: Request, env: Env, user: UserProps): Promise<Response> {
  const url = new URL(request.url);
  const match = SSE_PATH.exec(url.pathname);
  if (!match) return new Response("Not Found", { status: 404 });
  const skill = match[1] ?? "default";
  const isMessage = match[2] !== undefined;
  const refusal = browserOriginRefusal(request, env);
  if (refusal) return refusal;

  if (!isMessage && request.method === "GET") {
    const sessionId = crypto.randomUUID();
    const stub = env.LEGACY_SSE.get(env.LEGACY_SSE.idFromName(sessionId));
    const endpoint = `${url.pathname}/message?sessionId=${sessionId}`;
    const lastEventId = request.headers.get("last-event-id") ?? undefined;
    // An SDK client's EventSource reconnecting sends the revision it negotiated (a first GET comes before any).
    const resumed = lastEventId !== undefined || request.headers.has("mcp-protocol-version");
    const client = await credentialDigest(request);
    const stream = await stub.open({
      sessionId,
      skill,
      user,
      endpoint,
      origin: url.origin,
      client,
      ...(resumed ? { resumed: lastEventId === undefined ? {} : { lastEventId } } : {}),
    });
    if (!stream) return Response.json({ error: `No skill named "${skill}" in this tenant's catalog.` }, { status: 404 });
    return new Response(stream, {
      headers: { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" },
    });
  }
  if (isMessage && request.method === "POST") {
    const sessionId = url.searchParams.get("sessionId");
    if (!sessionId || !/^[0-9a-f-]{36}$/.test(sessionId)) {
      return Response.json({ error: "Missing or malformed sessionId." }, { status: 400 });
    }
    const bounded = await readBoundedBody(request);
    if (!bounded.ok) return bounded.response;
    // Answered on the POST, not the stream: the SDK clients fail the pending call with this text.
    const posted = new PostedBody(bounded.bytes);
    const refused = earlyRefusal(posted, 400);
    if (refused) return refused;
    const body = posted.json();
    if (body === undefined) return Response.json({ error: "The body must be a JSON-RPC message." }, { status: 400 });
    const status = await env.LEGACY_SSE.get(env.LEGACY_SSE.idFromName(sessionId)).deliver(user.userId, body);
    return status === 202 ? new Response("Accepted", { status }) : Response.json({ error: sseError(status) }, { status });
  }
  // RFC 9110 §15.5.6: a 405 names the methods the resource supports.
  return new Response("Method Not Allowed", { status: 405, headers: { Allow: sseAllow(url.pathname) } });
}

/** The credential's digest (never the credential itself in storage): one user's clients apart, "" without one. */
async function credentialDigest(request: Request): Promise<string> {
  const authorization = request.headers.get("authorization");
  return authorization ? (await sha256Hex(authorization)).slice(0, 32) : "";
}

/** The methods an SSE path supports: GET opens the stream, POST delivers to `/message`. */
export function sseAllow(pathname: string): string {
  return pathname.endsWith("/message") ? "POST, OPTIONS" : "GET, OPTIONS";
}

/** Shape is checked by the session (parseJSONRPCMessage); here only whether it is JSON at all. */
function sseError(status: number): string {
  if (status === 404) return "No open SSE stream for this sessionId: open GET /sse again.";
  if (status === 403) return "This SSE session belongs to another user.";
  return "Malformed JSON-RPC message.";
}

/**
 * Opening a legacy SSE stream of a skill the caller may not use: the 403, or null to go on.
 * Messages on an open stream are not checked here; the session refuses their runs.
 */
export async function sseAccessRefusal(request: Request, env: Env, user: UserProps): Promise<Response | null> {
  const match = SSE_PATH.exec(new URL(request.url).pathname);
  if (!match || match[2] !== undefined || request.method !== "GET") return null;
  const skill = await loadSkill(env, match[1] ?? "default");
  return skill && !canUseSkill(skill.name, skill.config, user) ? accessRefused(skill.name) : null;
}
