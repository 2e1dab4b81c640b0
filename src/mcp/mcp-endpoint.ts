import { createMcpHandler, getMcpAuthContext, type StatelessMcpHandler } from "agents/mcp/server";
import { onSkillChanged } from "../admin/skill-change-events";
import type { UserProps } from "../auth/user-props";
import { loadSkill, type CompiledSkill } from "../catalog/compiled-skill-cache";
import { SlipsnisseError } from "../errors";
import { contextWithProps } from "../execution-context";
import { buildExpertServer } from "./expert-mcp-server";
import { readBoundedBody } from "./request-body-limit";

/**
 * The authenticated MCP surface: `/mcp` serves the default skill, `/s/<skill>/mcp` a named one.
 * Identity arrives as validated UserProps from the auth layer (OAuth grant props, or the
 * loopback dev user); this module never sees a token.
 */
export const MCP_PATH = /^\/(?:s\/([a-z0-9][a-z0-9-]{0,62})\/)?mcp$/;

/** Progress and SSE comment frames this often let workerd notice a vanished client (STACK.md). */
const KEEP_ALIVE_MS = 1_000;

interface RequestProps {
  user: UserProps;
  skill: CompiledSkill;
}

/**
 * The props serveMcp hands the MCP handler. The factory accepts only objects issued here (the
 * user was validated by the auth layer, the skill by the catalog cache), which is a stricter
 * check than re-parsing them with zod on every request, and costs a lookup.
 */
const issuedProps = new WeakMap<object, RequestProps>();

function requestProps(): RequestProps {
  const props = getMcpAuthContext()?.props;
  const issued = props ? issuedProps.get(props) : undefined;
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
      () => {
        const { user, skill } = requestProps();
        return buildExpertServer({ env, skill, user });
      },
      { route: path, keepAliveMs: KEEP_ALIVE_MS },
    );
    handlers.set(path, handler);
  }
  return handler;
}

export class UnissuedRequestPropsError extends SlipsnisseError {
  readonly kind = "unissued_request_props";
  readonly fix = "Route MCP requests through serveMcp, which attaches the validated user and skill.";
  constructor() {
    super("An MCP server was requested without the props serveMcp issues; none was built.");
  }
}

export function skillFromPath(pathname: string): string | null {
  const match = MCP_PATH.exec(pathname);
  if (!match) return null;
  return match[1] ?? "default";
}

export async function serveMcp(request: Request, env: Env, ctx: ExecutionContext, user: UserProps): Promise<Response> {
  const url = new URL(request.url);
  const skillName = skillFromPath(url.pathname);
  if (skillName === null) return new Response("Not Found", { status: 404 });
  const skill = await loadSkill(env, skillName);
  if (!skill) {
    return Response.json(
      { error: `No skill named "${skillName}" in this tenant's catalog.` },
      { status: 404 },
    );
  }
  // A context of our own: the handler reads identity from `props`, and nothing else of the
  // inbound grant (in particular not the access token) reaches the MCP server or the tools.
  const props: RequestProps = { user, skill };
  issuedProps.set(props, props);
  let bounded = request;
  if (request.method === "POST") {
    const body = await readBoundedBody(request);
    if (!body.ok) return body.response;
    bounded = new Request(request.url, { method: "POST", headers: request.headers, body: body.bytes, signal: request.signal });
  }
  return handlerFor(url.pathname, env)(bounded, env, contextWithProps(ctx, props));
}
