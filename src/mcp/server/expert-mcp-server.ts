import { McpServer, fromJsonSchema, type JsonSchemaType, type RegisteredTool } from "@modelcontextprotocol/server";
import type { ExpertConfig, ToolPolicy } from "../../catalog/catalog-schema";
import { sessionStub } from "../../experts/session/session-name";
import { deriveExpertAnnotations, expertMayNeedApproval, expertTitle, type CachedListings } from "../../experts/tools/expert-tool-annotations";
import { type CallerContext, callExpert } from "./expert-tool-call";
import { expertInputSchema, mayNeedApproval } from "./expert-tool-schema";
import { type CallStream, routedRequester } from "../delivery/mid-call-requests";
import { RUN_APP_EXTENSION, RUN_APP_TOOL_META, registerRunApp } from "./run-app";
import { registerRunResources } from "./run-resources";
import { TASKS_CAPABILITY, TASKS_EXTENSION } from "./task-capability";

export const SERVER_INFO = { name: "slipsnisse", version: "0.1.0" } as const;

/** What one request brings beyond its client: served by a server built for it alone (Streamable HTTP). */
export interface ServedRequest {
  /**
   * The skill's cached downstream tool lists, when this request lists tools: each expert tool's
   * annotations are derived from its whitelist's. Other requests skip the reads and register
   * the tools without annotations (only tools/list shows them).
   */
  listings?: CachedListings | undefined;
  /** The request's own SSE stream, for requests to the client mid-call and resumable calls. */
  callStream?: CallStream | undefined;
  /**
   * The one tool a stateless request calls (a single tools/call): only that expert is registered,
   * since answering the call reads nothing of the others, and a skill's experts each cost a
   * registration per request. Unset: every expert (tools/list, a long-lived legacy SSE server).
   */
  calledTool?: string | undefined;
}

/**
 * A fresh MCP server for one request (createMcpHandler builds one per request in both
 * protocol eras), or for one legacy SSE stream, exposing the skill's experts as tools. No
 * state lives with the clientSessionId: everything a follow-up needs is in the thread handle and the
 * user's ExpertSession.
 */
export function buildExpertServer(context: CallerContext, request: ServedRequest = {}): McpServer {
  const { skill, profile } = context;
  const server = new McpServer(SERVER_INFO, {
    // listChanged only where a change can be announced (ClientProfile.listChanged); resources/list
    // is never cached. 2026-07-28 requests get Tasks through the extension, 2025 ones in core.
    capabilities: {
      tools: { listChanged: profile.listChanged },
      resources: { listChanged: profile.listChanged },
      ...(profile.tasks === "core" ? { tasks: TASKS_CAPABILITY } : {}),
      ...(profile.tasks === "extension" || profile.ui
        ? { extensions: { ...(profile.tasks === "extension" ? TASKS_EXTENSION : {}), ...(profile.ui ? RUN_APP_EXTENSION : {}) } }
        : {}),
    },
    instructions: skill.config.description,
    // 2026-07-28 clients re-list after ttlMs: about KV's propagation window after a catalog change.
    cacheHints: { "tools/list": { ttlMs: 60_000, cacheScope: "private" }, "resources/list": { ttlMs: 0, cacheScope: "private" } },
    // A catalog change swaps every expert tool (replaceExpertTools): one notification, not one per tool.
    debouncedNotificationMethods: ["notifications/tools/list_changed"],
  });
  // A server built for one tools/call (stateless Streamable HTTP) answers only that call: the
  // run resources and the run view are for the requests that read them.
  if (request.calledTool === undefined) {
    registerRunResources(server, { env: context.env, skill: skill.name, user: context.user, ui: profile.ui });
    if (profile.ui) registerRunApp(server);
  }
  expertTools.set(server, registerExpertTools(server, context, request));
  return server;
}

/** Each server's expert tools, so a long-lived server (legacy SSE) can swap them when the catalog changes. */
const expertTools = new WeakMap<McpServer, RegisteredTool[]>();

function registerExpertTools(server: McpServer, context: CallerContext, { listings, callStream, calledTool }: ServedRequest): RegisteredTool[] {
  const { env, skill, user, profile } = context;
  const tools: RegisteredTool[] = [];
  for (const expert of skill.config.experts) {
    if (calledTool !== undefined && expert.name !== calledTool) continue;
    const tool = server.registerTool(
      expert.name,
      {
        title: expertTitle(expert),
        description: expert.description,
        inputSchema: compiledInputSchema(expert, skill.config.tool_policy, listings),
        ...compiledOutputSchema(expert),
        ...(listings ? { annotations: deriveExpertAnnotations(expert, skill.config.tool_policy, listings) } : {}),
        // The run view (run-app.ts), only for a client that declared MCP Apps.
        ...(profile.ui ? { _meta: RUN_APP_TOOL_META } : {}),
      },
      async (args, ctx) => {
        // Mid-call requests of a stateless 2025 call go out on its own stream; the reply comes back through the session.
        const routed = profile.midCall === "call-stream" && callStream ? routedRequester(callStream, sessionStub(env, skill.name, user.userId)) : undefined;
        const result = await callExpert(context, expert, args, ctx, { routed, resumableStream: callStream?.resumable?.id });
        // The call recorded a run: slipsnisse://runs/<id> is new in this user's resources/list.
        if (profile.runsChangedAfterCall) void server.sendResourceListChanged();
        return result;
      },
    );
    // registerTool drops an `execution` given in its config (SDK 2.4.0); tools/list reads the field.
    if (profile.tasks === "core" && expert.task !== "forbidden") tool.execution = { taskSupport: expert.task };
    tools.push(tool);
  }
  return tools;
}

/**
 * Replaces a connected server's expert tools with `skill`'s (a new catalog version): the SDK
 * tells the client with `notifications/tools/list_changed`, once (debounced), when the server
 * advertises `tools.listChanged`.
 */
export function replaceExpertTools(server: McpServer, context: CallerContext, request: ServedRequest): void {
  for (const tool of expertTools.get(server) ?? []) tool.remove();
  expertTools.set(server, registerExpertTools(server, context, request));
}

type CompiledJsonSchema = ReturnType<typeof fromJsonSchema<Record<string, unknown>>>;

/**
 * The server is rebuilt per request, but an expert's input schema (and the validator compiled
 * from it) only changes with the catalog: kept per expert config object, which the compiled
 * skill shares across requests until the skill is reloaded (a new object, so a new entry).
 */
const inputSchemas = new WeakMap<ExpertConfig, { withApprove?: CompiledJsonSchema; withoutApprove?: CompiledJsonSchema }>();
const outputSchemas = new WeakMap<ExpertConfig, CompiledJsonSchema>();

/**
 * With `listings` (a request that lists tools) `approve` is offered only when a whitelisted tool
 * may need approval as its server last listed it; a call's schema accepts it whenever the policy
 * may need it, so a listing that changed since the client's tools/list cannot refuse the decision.
 */
export function compiledInputSchema(expert: ExpertConfig, policy: ToolPolicy, listings?: CachedListings): CompiledJsonSchema {
  const offerApprove = mayNeedApproval(policy) && (listings === undefined || expertMayNeedApproval(expert, policy, listings));
  let schemas = inputSchemas.get(expert);
  if (!schemas) {
    schemas = {};
    inputSchemas.set(expert, schemas);
  }
  const variant = offerApprove ? "withApprove" : "withoutApprove";
  let schema = schemas[variant];
  if (!schema) {
    schema = fromJsonSchema<Record<string, unknown>>(expertInputSchema(expert, policy, offerApprove));
    schemas[variant] = schema;
  }
  return schema;
}

/** An `output_schema` is advertised as the tool's outputSchema; the SDK checks structuredContent against it. */
function compiledOutputSchema(expert: ExpertConfig): { outputSchema?: CompiledJsonSchema } {
  if (!expert.output_schema) return {};
  let schema = outputSchemas.get(expert);
  if (!schema) {
    schema = fromJsonSchema<Record<string, unknown>>(expert.output_schema as JsonSchemaType);
    outputSchemas.set(expert, schema);
  }
  return { outputSchema: schema };
}
