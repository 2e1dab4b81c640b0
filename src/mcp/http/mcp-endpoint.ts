import type { UserProps } from "../../auth/user-props";
import { loadSkill } from "../../catalog/compiled-skill-cache";
import { canUseSkill } from "../../catalog/skill-access";
import type { McpRequestRef } from "../../experts/core/call-types";
import { sessionStub } from "../../experts/session/session-name";
import { cachedListings } from "../../experts/tools/expert-tool-annotations";
import { browserOriginRefusal } from "../inbound/browser-origin";
import { answerTaskMessage, type TaskContext } from "../tasks/expert-tasks";
import { serveTasksExtension } from "../tasks/expert-tasks-extension";
import { mintClientSessionId } from "../inbound/client-session-id";
import { earlyRefusal } from "../inbound/early-refusals";
import { classifyPost, type InboundPost, profileOfBodiless } from "../inbound/inbound-post";
import { PostedBody } from "../inbound/posted-body";
import { serveListen } from "../tasks/listen-stream";
import { type McpRequestProps, serveWithSdk } from "./mcp-handler";
import { CallStream } from "../delivery/mid-call-requests";
import { readBoundedBody } from "../inbound/request-body-limit";
import { lastEventOf, resumedStream } from "../delivery/resumable-calls";
import { resumeRetryMs } from "../delivery/resume-timing";
import { accessRefused } from "../inbound/skill-access-gate";

/**
 * The authenticated MCP surface: `/mcp` serves the default skill, `/s/<skill>/mcp` a named one.
 * Identity arrives as validated UserProps from the auth layer (OAuth grant props, or the
 * loopback dev user); this module never sees a token. A request is classified once
 * (inbound-post.ts), routed by what it is, and handed to the SDK unless it is served here.
 */
export const MCP_PATH = /^\/(?:s\/([a-z0-9][a-z0-9-]{0,62})\/)?mcp$/;

/** The methods the MCP endpoint supports (every exchange is a POST; GET opens no stream here). */
export const MCP_ALLOW = "POST, OPTIONS";

export function skillFromPath(pathname: string): string | null {
  const match = MCP_PATH.exec(pathname);
  if (!match) return null;
  return match[1] ?? "default";
}

export async function serveMcp(request: Request, env: Env, user: UserProps): Promise<Response> {
  const url = new URL(request.url);
  const skillName = skillFromPath(url.pathname);
  if (skillName === null) return new Response("Not Found", { status: 404 });
  const refusal = browserOriginRefusal(request, env);
  if (refusal) return refusal;
  const skill = await loadSkill(env, skillName);
  if (!skill) {
    return Response.json({ error: `No skill named "${skillName}" in this tenant's catalog.` }, { status: 404 });
  }
  // Not listed in the skill's `access`: the endpoint is the skill, so "not seeing it" is this 403.
  if (!canUseSkill(skill.name, skill.config, user)) return accessRefused(skill.name);
  const context: TaskContext = { env, skill, user };
  if (request.method === "POST") {
    const read = await readBoundedBody(request);
    if (!read.ok) return read.response;
    const body = new PostedBody(read.bytes);
    const refused = earlyRefusal(body);
    if (refused) return refused;
    return servePost(request, classifyPost(request, body), context);
  }
  // A 2025-11-25 client resuming a call's stream after its connection dropped (resumable-calls.ts).
  const last = request.method === "GET" ? lastEventOf(request) : undefined;
  if (last) {
    const resumed = await resumedStream(() => sessionStub(env, skill.name, user.userId), last);
    return (
      resumed ??
      Response.json(
        { jsonrpc: "2.0", id: null, error: { code: -32000, message: "No stream to resume under that Last-Event-ID for this user." } },
        { status: 404 },
      )
    );
  }
  return withAllowOn405(await serveWithSdk(request, undefined, { user, skill, profile: profileOfBodiless(request) }, env));
}

async function servePost(request: Request, inbound: InboundPost, context: TaskContext): Promise<Response> {
  const { env, skill, user } = context;
  const { profile } = inbound;
  // A client's reply to a request sent mid-call goes to the run waiting in the caller's session.
  if (inbound.replies.length > 0) {
    const session = sessionStub(env, skill.name, user.userId);
    await Promise.all(inbound.replies.map(({ id, reply }) => session.deliverClientReply(id, reply).catch(() => false)));
    if (inbound.kind === "client-reply") return new Response(null, { status: 202 });
  }
  const answered = await servedBeforeSdk(request, inbound, context);
  if (answered) return answered;

  const props: McpRequestProps = { user, skill, profile };
  const call = inbound.kind === "tool-call" ? inbound.toolCall : undefined;
  // The one tool a single tools/call calls: the server registers only that expert.
  if (call) props.calledTool = call.name;
  // A 2025-11-25 call's stream is resumable; its retry follows the called expert's budget (resumable-calls.ts).
  const budget = profile.resumableCalls && call?.id !== undefined ? skill.config.experts.find((expert) => expert.name === call.name)?.budget : undefined;
  const resumable = budget === undefined ? undefined : { id: crypto.randomUUID(), retryMs: resumeRetryMs(budget.timeout_ms) };
  if (resumable !== undefined || profile.midCall === "call-stream") props.callStream = new CallStream(resumable);
  // Tool annotations need the cached downstream lists: read only for a request that lists tools.
  if (inbound.listsTools) props.listings = await cachedListings(env.CACHE, skill.name, skill.config.servers, skill.config.experts);

  const handled = await serveWithSdk(request, inbound, props, env);
  const minted = inbound.initialize ? mintClientSessionId(inbound.initialize.capabilities) : undefined;
  const response = withClientSessionId(props.callStream ? props.callStream.attach(handled) : handled, minted);
  // createMcpHandler serves each POST on a fresh server, so a 2025 client's cancel reaches an
  // instance that never saw the call and aborts nothing there: the caller's own session (the
  // path's skill, the signed-in user) finds the run by request id. Only once the handler has
  // accepted the message, and still answered with its 202 as the spec wants.
  if (inbound.cancels.length > 0 && response.ok) {
    const session = sessionStub(env, skill.name, user.userId);
    const { clientSessionId } = profile;
    const ref = (requestId: string | number): McpRequestRef => ({ requestId, ...(clientSessionId === undefined ? {} : { clientSessionId }) });
    await Promise.all(inbound.cancels.map((requestId) => session.cancelRequest(ref(requestId)).catch(() => "not_found")));
  }
  return withAllowOn405(response);
}

/**
 * MCP Tasks and `subscriptions/listen`, which the SDK does not serve, answered here: 2025-11-25
 * core Tasks (expert-tasks.ts), the 2026-07-28 Tasks extension (expert-tasks-extension.ts) and
 * listen streams that carry only the caller's own runs and tasks (listen-stream.ts). Null for
 * everything else, which the SDK serves.
 */
async function servedBeforeSdk(request: Request, inbound: InboundPost, context: TaskContext): Promise<Response | null> {
  const { kind, profile, toolCall, modern } = inbound;
  if (profile.tasks === "core") {
    // A call is task traffic when it asks for a task, or calls an expert that requires one (refused without).
    const requiresTask = toolCall !== undefined && context.skill.config.experts.some((expert) => expert.name === toolCall.name && expert.task === "required");
    if (kind === "tasks" || (kind === "tool-call" && (toolCall?.asksTask || requiresTask))) {
      const answered = await answerTaskMessage(inbound.json, context);
      return answered === null ? null : Response.json(answered);
    }
    return null;
  }
  if (modern === undefined) return null;
  if (profile.tasks === "extension" && (kind === "tasks" || kind === "tool-call")) return serveTasksExtension(request, modern, context);
  if (kind === "listen") return serveListen(request, modern, context);
  return null;
}

/** The clientSessionId minted for a client that declared elicitation or MCP Apps, on its `initialize` answer. */
function withClientSessionId(response: Response, minted: string | undefined): Response {
  if (minted === undefined || !response.ok) return response;
  const headers = new Headers(response.headers);
  headers.set("Mcp-Session-Id", minted);
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

/** RFC 9110 §15.5.6: a 405 names the methods the resource does support (GET opens no stream here). */
function withAllowOn405(response: Response): Response {
  if (response.status !== 405) return response;
  const headers = new Headers(response.headers);
  headers.set("Allow", MCP_ALLOW);
  return new Response(response.body, { status: 405, statusText: response.statusText, headers });
}
