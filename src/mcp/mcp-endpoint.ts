import { createMcpHandler, type StatelessMcpHandler } from "agents/mcp/server";
import { onSkillChanged } from "../catalog/skill-change-events";
import type { UserProps } from "../auth/user-props";
import { loadSkill, type CompiledSkill } from "../catalog/compiled-skill-cache";
import { canUseSkill } from "../catalog/skill-access";
import { accessRefused } from "./skill-access-gate";
import { sessionStub } from "../experts/session/session-name";
import { browserOriginRefusal } from "./browser-origin";
import { cachedListings, type CachedListings } from "../experts/tools/expert-tool-annotations";
import { cancelledRequestIds } from "./cancel-notifications";
import { buildExpertServer } from "./expert-mcp-server";
import { serveTaskRequest } from "./expert-tasks";
import { serveTasksExtension } from "./expert-tasks-extension";
import { serveListen } from "./listen-stream";
import { UnissuedRequestPropsError } from "./mcp-errors";
import { earlyRefusal } from "./early-refusals";
import { CallStream, capabilitiesOfConnection, clientRepliesIn, connectionIdFor, initializeCapabilities } from "./mid-call-requests";
import { readBoundedBody } from "./request-body-limit";
import { PostedBody } from "./posted-body";
import { lastEventOf, resumableCallId, resumedStream } from "./resumable-calls";
import { resumeRetryMs } from "./resume-timing";
import { calledTool, mayListTools } from "./tool-requests";
import { declaresUi, requestDeclaresUi } from "./run-app";

/**
 * The authenticated MCP surface: `/mcp` serves the default skill, `/s/<skill>/mcp` a named one.
 * Identity arrives as validated UserProps from the auth layer (OAuth grant props, or the
 * loopback dev user); this module never sees a token.
 */
export const MCP_PATH = /^\/(?:s\/([a-z0-9][a-z0-9-]{0,62})\/)?mcp$/;

/** The methods the MCP endpoint supports (every exchange is a POST; GET opens no stream here). */
export const MCP_ALLOW = "POST, OPTIONS";

/**
 * workerd notices a vanished client only when a write to its response fails, and the first
 * write after the client left still succeeds (it is buffered), so a closed stream is noticed
 * about two keep-alives later (measured through wrangler dev: about 1.9 s at a 1 s interval,
 * about 0.5 s at this one), within the 1 s a cancel must take. A comment frame is 13 bytes.
 * docs/platform-notes.md#cancellation-and-disconnects
 */
const KEEP_ALIVE_MS = 250;

interface RequestProps {
  user: UserProps;
  skill: CompiledSkill;
  /**
   * An `Mcp-Session-Id` the client sent: one this server minted at `initialize` for a client that
   * declared elicitation (mid-call-requests.ts), or any a client sends on its own.
   */
  connection?: string;
  /** Cached downstream tool lists, read only for a request that lists tools (for annotations). */
  listings?: CachedListings;
  /** The response stream, for requests to the client mid-call (mid-call-requests.ts). */
  callStream?: CallStream;
  /** The one tool a single tools/call calls: the server registers only its expert (tool-requests.ts). */
  calledTool?: string;
  /** The client declared MCP Apps (run-app.ts): its connection id says so (2025), or the request's envelope (2026-07-28). */
  ui?: boolean;
}

/**
 * What serveMcp hands the MCP server factory, by the very Request it passes the handler (the SDK
 * gives the factory that Request as `requestInfo`). Only requests issued here have props (the
 * user was validated by the auth layer, the skill by the catalog cache), a stricter check than
 * re-parsing them with zod on every request, and it costs a lookup.
 */
const issuedProps = new WeakMap<Request, RequestProps>();

function requestProps(request: Request | undefined): RequestProps {
  const issued = request === undefined ? undefined : issuedProps.get(request);
  if (!issued) throw new UnissuedRequestPropsError();
  return issued;
}

// createMcpHandler matches one exact route; a handler per skill path, built once per isolate.
const handlers = new Map<string, StatelessMcpHandler>();

// Listen streams open on this isolate learn of a catalog change at once; clients elsewhere
// re-list when their tools/list ttlMs runs out (no cross-isolate event bus yet).
onSkillChanged((skill) => {
  for (const path of skill === "default" ? ["/mcp", "/s/default/mcp"] : [`/s/${skill}/mcp`]) handlers.get(path)?.notify.toolsChanged();
});

function handlerFor(path: string, env: Env): StatelessMcpHandler {
  let handler = handlers.get(path);
  if (!handler) {
    handler = createMcpHandler(
      ({ era, requestInfo }) => {
        const { user, skill, connection, listings, callStream, ui, calledTool: only } = requestProps(requestInfo);
        return buildExpertServer({
          env,
          skill,
          user,
          connection,
          listings,
          listChanged: era === "modern",
          era,
          tasks: era === "legacy",
          ...(callStream ? { callStream } : {}),
          ...(ui ? { ui } : {}),
          ...(only === undefined ? {} : { calledTool: only }),
        });
      },
      // "sse": a 2026-07-28 tools/call is streamed from the start, so its keep-alives reveal a
      // client that closed the stream (its way to cancel) even when no progress is sent; a JSON
      // answer writes nothing until the end. 2025 requests are streamed by the SDK already.
      // The Origin check runs in serveMcp (browserOriginRefusal) before this handler, the same
      // check that answers the CORS preflight; the handler's own is hostname-only and knows
      // nothing of ALLOWED_ORIGINS, so it would refuse what the preflight allowed.
      { route: path, keepAliveMs: KEEP_ALIVE_MS, responseMode: "sse", allowedOriginHostnames: "*" },
    );
    handlers.set(path, handler);
  }
  return handler;
}

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
  if (!canUseSkill(skill.config, user)) return accessRefused(skill.name);
  const connection = request.headers.get("mcp-session-id") ?? undefined;
  const props: RequestProps = { user, skill, ...(connection === undefined ? {} : { connection }) };
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
  let forward = request;
  let parsedBody: unknown;
  let cancels: Array<string | number> = [];
  let minted: string | undefined;
  if (request.method === "POST") {
    const read = await readBoundedBody(request);
    if (!read.ok) return read.response;
    const body = new PostedBody(read.bytes);
    const refused = earlyRefusal(body);
    if (refused) return refused;
    cancels = cancelledRequestIds(body);
    // A client's reply to a request sent mid-call goes to the run waiting in the caller's session.
    const { replies, only } = clientRepliesIn(body);
    if (replies.length > 0) {
      const session = sessionStub(env, skill.name, user.userId);
      await Promise.all(replies.map(({ id, reply }) => session.deliverClientReply(id, reply).catch(() => false)));
      if (only) return new Response(null, { status: 202 });
    }
    const initialize = connection === undefined ? initializeCapabilities(body) : undefined;
    if (connection === undefined) minted = connectionIdFor(initialize);
    const resumable = resumableCallId(request, body);
    // The retry follows the called expert's budget (resumable-calls.ts); a call of no expert is not resumable.
    const budget = resumable === undefined ? undefined : skill.config.experts.find((expert) => expert.name === calledTool(body))?.budget;
    const stream = resumable === undefined || budget === undefined ? undefined : { id: resumable, retryMs: resumeRetryMs(budget.timeout_ms) };
    const declared = capabilitiesOfConnection(connection);
    if (stream !== undefined || declared?.elicitation) props.callStream = new CallStream(stream);
    // MCP Tasks requests are answered before the SDK, which serves none (2025-11-25 core Tasks
    // in expert-tasks.ts, the 2026-07-28 extension in expert-tasks-extension.ts).
    // 2026-07-28 `subscriptions/listen` too: a stream carries only the caller's own runs and tasks (listen-stream.ts).
    const taskAnswer =
      (await serveTaskRequest(request, body, { env, skill, user })) ??
      (await serveTasksExtension(request, body, { env, skill, user })) ??
      (await serveListen(request, body, { env, skill, user }));
    if (taskAnswer) return taskAnswer;
    // MCP Apps: a 2025 client said so at `initialize` (its connection id), a 2026-07-28 one says so in each request.
    // (An `initialize` declaring it is answered with the extension among the server's capabilities.)
    if (declared?.extensions !== undefined || (initialize !== undefined && declaresUi(initialize)) || (isModern(request) && requestDeclaresUi(body)))
      props.ui = true;
    // Tool annotations need the cached downstream lists: read only for a request that lists tools.
    const called = calledTool(body);
    if (called !== undefined) props.calledTool = called;
    if (mayListTools(body)) props.listings = await cachedListings(env.CACHE, skill.name, skill.config.servers, skill.config.experts);
    // The body as parsed here goes to the SDK, which then reads and parses it no more: unparsed,
    // its entry would tee the body to classify it and its transport read and parse it again.
    // A body that is no JSON goes as it came, for the SDK to answer with its own parse error.
    parsedBody = body.json();
    if (parsedBody === undefined) forward = new Request(request.url, { method: "POST", headers: request.headers, body: body.bytes, signal: request.signal });
  }
  // A context of our own: nothing of the inbound grant (in particular not the access token)
  // reaches the MCP server or the tools, only the props issued here, looked up by this Request.
  issuedProps.set(forward, props);
  const handled = await handlerFor(url.pathname, env).fetch(forward, parsedBody === undefined ? undefined : { parsedBody });
  const response = withConnectionId(props.callStream ? props.callStream.attach(handled) : handled, minted);
  // createMcpHandler serves each POST on a fresh server, so a 2025 client's cancel reaches an
  // instance that never saw the call and aborts nothing there: the caller's own session (the
  // path's skill, the signed-in user) finds the run by request id. Only once the handler has
  // accepted the message, and still answered with its 202 as the spec wants.
  if (cancels.length > 0 && response.ok) {
    const session = sessionStub(env, skill.name, user.userId);
    const ref = (requestId: string | number) => ({ requestId, ...(connection === undefined ? {} : { clientSessionId: connection }) });
    await Promise.all(cancels.map((requestId) => session.cancelRequest(ref(requestId)).catch(() => "not_found")));
  }
  return withAllowOn405(response);
}

/** A 2026-07-28 request (no protocol session: it names its revision on every request). */
function isModern(request: Request): boolean {
  const version = request.headers.get("mcp-protocol-version");
  return version !== null && !/^202[45]-/.test(version);
}

/** The `Mcp-Session-Id` minted for a client that declared elicitation, on its `initialize` answer. */
function withConnectionId(response: Response, minted: string | undefined): Response {
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
