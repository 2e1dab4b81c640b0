import { createMcpHandler, type StatelessMcpHandler } from "agents/mcp/server";
import type { UserProps } from "../../auth/user-props";
import type { CompiledSkill } from "../../catalog/compiled-skill-cache";
import { onSkillChanged } from "../../catalog/skill-change-events";
import type { CachedListings } from "../../experts/tools/expert-tool-annotations";
import { buildExpertServer } from "../server/expert-mcp-server";
import type { ClientProfile } from "../inbound/client-profile";
import type { InboundPost } from "../inbound/inbound-post";
import { UnissuedRequestPropsError } from "../mcp-errors";
import type { CallStream } from "../delivery/mid-call-requests";

/**
 * workerd notices a vanished client only when a write to its response fails, and the first
 * write after the client left still succeeds (it is buffered), so a closed stream is noticed
 * about two keep-alives later (measured through wrangler dev: about 1.9 s at a 1 s interval,
 * about 0.5 s at this one), within the 1 s a cancel must take. A comment frame is 13 bytes.
 * docs/platform-notes.md#cancellation-and-disconnects
 */
const KEEP_ALIVE_MS = 250;

/** What serveMcp decided about a request, handed to the MCP server the SDK builds for it. */
export interface McpRequestProps {
  user: UserProps;
  skill: CompiledSkill;
  profile: ClientProfile;
  /** Cached downstream tool lists, read only for a request that lists tools (for annotations). */
  listings?: CachedListings;
  /** The response stream, for requests to the client mid-call and resumable calls (mid-call-requests.ts). */
  callStream?: CallStream;
  /** The one tool a single tools/call calls: the server registers only its expert. */
  calledTool?: string;
}

/**
 * What serveMcp hands the MCP server factory, by the very Request it passes the handler (the SDK
 * gives the factory that Request as `requestInfo`). Only requests issued here have props (the
 * user was validated by the auth layer, the skill by the catalog cache), a stricter check than
 * re-parsing them with zod on every request, and it costs a lookup. Nothing of the inbound grant
 * (in particular not the access token) reaches the MCP server or the tools.
 */
const issuedProps = new WeakMap<Request, McpRequestProps>();

function requestProps(request: Request | undefined): McpRequestProps {
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
      ({ requestInfo }) => {
        const { user, skill, profile, listings, callStream, calledTool } = requestProps(requestInfo);
        return buildExpertServer({ env, skill, user, profile }, { listings, callStream, calledTool });
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

/**
 * The SDK's answer to a request serveMcp did not serve itself. A POST's body goes as parsed
 * (inbound-post.ts), which the SDK then reads and parses no more: unparsed, its entry would tee
 * the body to classify it and its transport read and parse it again. A body that is no JSON goes
 * as it came, for the SDK to answer with its own parse error.
 */
export async function serveWithSdk(request: Request, inbound: InboundPost | undefined, props: McpRequestProps, env: Env): Promise<Response> {
  const parsedBody = inbound?.json;
  const forward =
    inbound !== undefined && parsedBody === undefined
      ? new Request(request.url, { method: "POST", headers: request.headers, body: inbound.body.bytes, signal: request.signal })
      : request;
  issuedProps.set(forward, props);
  return handlerFor(new URL(request.url).pathname, env).fetch(forward, parsedBody === undefined ? undefined : { parsedBody });
}
