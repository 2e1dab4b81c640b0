import { waitUntil } from "cloudflare:workers";
import {
  McpServer,
  fromJsonSchema,
  type CallToolResult,
  type InputRequiredResult,
  type JsonSchemaType,
  type RegisteredTool,
  type ServerContext,
} from "@modelcontextprotocol/server";
import type { UserProps } from "../auth/user-props";
import type { CompiledSkill } from "../catalog/compiled-skill-cache";
import type { ExpertConfig, ToolPolicy } from "../catalog/catalog-schema";
import type { StepProgress } from "../experts/core/run-types";
import { deriveExpertAnnotations, expertMayNeedApproval, expertTitle, type CachedListings } from "../experts/tools/expert-tool-annotations";
import { log } from "../observability/logger";
import { prepareExpertCall } from "./expert-call-checks";
import { expertInputSchema, mayNeedApproval, splitThread } from "./expert-tool-schema";
import { TASKS_CAPABILITY, TASKS_EXTENSION } from "./task-capability";
import { toToolResult } from "./expert-tool-result";
import { sessionStub } from "../experts/session/session-name";
import { interruptedRunResult } from "../experts/protocol/interrupted-run";
import { inputRequiredFor, retriedReply, userChannel, type UserChannel } from "./user-input";
import { connectInputRequired, connectPrompter, connectRetry, originOf, supportsUrlElicitation } from "./connect-elicitation";
import { registerRunResources } from "./run-resources";
import { decidedInRunView, RUN_APP_EXTENSION, RUN_APP_TOOL_META, registerRunApp } from "./run-app";
import { type CallStream, type ClientRequester, capabilitiesOfConnection, routedRequester } from "./mid-call-requests";
import { progressNotification, streamRef } from "./resumable-calls";
import { resumeGraceMs } from "./resume-timing";

export const SERVER_INFO = { name: "slipsnisse", version: "0.1.0" } as const;

export interface ExpertServerContext {
  env: Env;
  skill: CompiledSkill;
  user: UserProps;
  /**
   * Whether the client can receive `notifications/tools/list_changed`, so `tools.listChanged`
   * is advertised only then: 2026-07-28 clients through `subscriptions/listen`, and legacy SSE
   * connections (their session swaps the tools: replaceExpertTools). Stateless 2025 Streamable
   * HTTP has no stream to send it on (GET is 405).
   */
  listChanged: boolean;
  /** Tells the user's connections apart for cancels by request id (see McpRequestRef). */
  connection?: string;
  /**
   * The skill's cached downstream tool lists, when this request lists tools: each expert tool's
   * annotations are derived from its whitelist's. Other requests skip the reads and register
   * the tools without annotations (only tools/list shows them).
   */
  listings?: CachedListings;
  /** The protocol era this server serves (createMcpHandler's factory says; legacy SSE is "legacy"). */
  era?: "legacy" | "modern";
  /** Whether to offer MCP Tasks (2025-11-25): 2025-era Streamable HTTP and legacy SSE (expert-tasks.ts). */
  tasks?: boolean;
  /** The origin the client reached, where no HTTP request rides along with each call (legacy SSE). */
  origin?: string;
  /** The request's own SSE stream, for requests to the client mid-call on stateless Streamable HTTP. */
  callStream?: CallStream;
  /**
   * Whether the client declared MCP Apps (`io.modelcontextprotocol/ui`, run-app.ts): then the
   * expert tools link the run view, its `ui://` page is a resource, and run reads carry the
   * waterfall as HTML. Without it the server is exactly what it was before the app existed.
   */
  ui?: boolean;
  /**
   * The one tool a stateless request calls (a single tools/call): only that expert is registered,
   * since answering the call reads nothing of the others, and a skill's experts each cost a
   * registration per request. Unset: every expert (tools/list, a long-lived legacy SSE server).
   */
  calledTool?: string;
}

/**
 * A fresh MCP server for one request (createMcpHandler builds one per request in both
 * protocol eras), exposing the skill's experts as tools. No state lives in the MCP session:
 * everything a follow-up needs is in the thread handle and the user's ExpertSession.
 */
export function buildExpertServer({
  env,
  skill,
  user,
  listChanged,
  connection,
  listings,
  era = "legacy",
  tasks = false,
  origin,
  callStream,
  ui = false,
  calledTool,
}: ExpertServerContext): McpServer {
  const server = new McpServer(SERVER_INFO, {
    // resources.listChanged only where a run's list can be announced to its own user: a legacy SSE
    // connection, after each call it made, and a 2026-07-28 listen stream, which hears of the
    // caller's own runs from their session (listen-stream.ts). resources/list is never cached.
    // 2026-07-28 requests get Tasks through the extension (expert-tasks-extension.ts), 2025-11-25 ones in core.
    capabilities: {
      tools: { listChanged },
      resources: { listChanged },
      ...(tasks ? { tasks: TASKS_CAPABILITY } : {}),
      ...(era === "modern" || ui ? { extensions: { ...(era === "modern" ? TASKS_EXTENSION : {}), ...(ui ? RUN_APP_EXTENSION : {}) } } : {}),
    },
    instructions: skill.config.description,
    // 2026-07-28 clients re-list after ttlMs: about KV's propagation window after a catalog change.
    cacheHints: { "tools/list": { ttlMs: 60_000, cacheScope: "private" }, "resources/list": { ttlMs: 0, cacheScope: "private" } },
    // A catalog change swaps every expert tool (replaceExpertTools): one notification, not one per tool.
    debouncedNotificationMethods: ["notifications/tools/list_changed"],
  });
  // A server built for one tools/call (stateless Streamable HTTP) answers only that call: the
  // run resources and the run view are for the requests that read them.
  if (calledTool === undefined) {
    registerRunResources(server, { env, skill: skill.name, user, ui });
    if (ui) registerRunApp(server);
  }
  expertTools.set(
    server,
    registerExpertTools(server, {
      env,
      skill,
      user,
      connection,
      listings,
      era,
      tasks,
      callStream,
      listChanged,
      ui,
      ...(origin === undefined ? {} : { origin }),
      ...(calledTool === undefined ? {} : { calledTool }),
    }),
  );
  return server;
}

/** Each server's expert tools, so a long-lived server (legacy SSE) can swap them when the catalog changes. */
const expertTools = new WeakMap<McpServer, RegisteredTool[]>();

type ToolContext = Pick<
  ExpertServerContext,
  "env" | "skill" | "user" | "connection" | "listings" | "era" | "tasks" | "callStream" | "listChanged" | "origin" | "ui" | "calledTool"
>;

/** Legacy SSE connections (the only 2025-era servers told they may send list changes) hear of new runs after each call. */
function runsChanged(era: ExpertServerContext["era"], listChanged: boolean): boolean {
  return era === "legacy" && listChanged;
}

function registerExpertTools(
  server: McpServer,
  { env, skill, user, connection, listings, era = "legacy", tasks = false, callStream, listChanged, origin, ui = false, calledTool }: ToolContext,
): RegisteredTool[] {
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
        ...(ui ? { _meta: RUN_APP_TOOL_META } : {}),
      },
      // The client's capabilities decide how the run may reach its user (user-input.ts).
      async (args, ctx) => {
        // A stateless 2025 request's server saw no `initialize`: its connection id says what the client declared.
        const stateless = server.server.getClientCapabilities() === undefined && era === "legacy" ? callStream : undefined;
        const capabilities = stateless ? capabilitiesOfConnection(connection) : server.server.getClientCapabilities();
        const routed = stateless ? routedRequester(stateless, sessionStub(env, skill.name, user.userId)) : undefined;
        const channel = userChannel(era, capabilities, ctx, expert, routed);
        const result = await callExpert(
          { env, skill, user, connection, ...(origin === undefined ? {} : { origin }) },
          expert,
          args,
          ctx,
          channel,
          // URL-mode elicitation: through the SDK's own request where the server saw `initialize`
          // (legacy SSE), routed back through the session on stateless 2025 calls, input_required in 2026.
          { era, urlElicitation: supportsUrlElicitation(capabilities), ui, ...(routed ? { routed } : {}) },
          callStream?.resumable?.id,
        );
        // The call recorded a run: slipsnisse://runs/<id> is new in this user's resources/list.
        if (runsChanged(era, listChanged)) void server.sendResourceListChanged();
        return result;
      },
    );
    // registerTool drops an `execution` given in its config (SDK 2.4.0); tools/list reads the field.
    if (tasks && expert.task !== "forbidden") tool.execution = { taskSupport: expert.task };
    tools.push(tool);
  }
  return tools;
}

/**
 * Replaces a connected server's expert tools with `skill`'s (a new catalog version): the SDK
 * tells the client with `notifications/tools/list_changed`, once (debounced), when the server
 * advertises `tools.listChanged`.
 */
export function replaceExpertTools(server: McpServer, context: ToolContext): void {
  for (const tool of expertTools.get(server) ?? []) tool.remove();
  expertTools.set(server, registerExpertTools(server, context));
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

async function callExpert(
  { env, skill, user, connection, origin }: Omit<ExpertServerContext, "listChanged" | "listings" | "tasks" | "callStream" | "ui">,
  expert: ExpertConfig,
  rawArgs: Record<string, unknown>,
  ctx: ServerContext,
  channel: UserChannel,
  client: { era: "legacy" | "modern"; urlElicitation: boolean; ui?: boolean; routed?: ClientRequester } = { era: "legacy", urlElicitation: false },
  resumableStream?: string,
): Promise<CallToolResult | InputRequiredResult> {
  // A 2026-07-28 retry after our connect request: same thread, and wait for the flow if the user went to the page.
  const connecting = client.era === "modern" ? connectRetry(ctx) : undefined;
  const split =
    connecting?.thread !== undefined && splitThread(rawArgs, expert).thread === undefined
      ? { ...splitThread(rawArgs, expert), thread: connecting.thread }
      : splitThread(rawArgs, expert);
  // A 2026-07-28 retry carrying the user's reply to our input_required answer resumes that run.
  const retried = channel.kind === "input-required" ? retriedReply(ctx, expert) : undefined;
  const prepared = prepareExpertCall(skill.name, expert, retried ? { ...split, ...retried } : split);
  if (!prepared.ok) return prepared.refusal;
  const { args, thread, answer, approve } = prepared;
  const refusal = retried && "refusal" in retried ? retried.refusal : undefined;
  const runId = crypto.randomUUID();
  // A 2025 client cancels with `notifications/cancelled` naming this id; on stateless Streamable
  // HTTP it arrives at another server instance, which finds the run through the session (serveMcp).
  const mcpRequest = { requestId: ctx.mcpReq.id, ...(connection === undefined ? {} : { clientSessionId: connection }) };
  const stub = sessionStub(env, skill.name, user.userId);
  const progressToken = ctx.mcpReq._meta?.progressToken;
  const onProgress = progressToken === undefined ? undefined : (progress: StepProgress) => ctx.mcpReq.notify(progressNotification(progressToken, progress));
  // A 2025-11-25 call's stream can be resumed (resumable-calls.ts): the session keeps its events.
  const stream =
    resumableStream === undefined
      ? undefined
      : streamRef(resumableStream, ctx.mcpReq.id, progressToken, expert.output_schema !== undefined, expert.budget.timeout_ms);
  // Closing the stream (2026-07-28), or a cancel this server instance receives (legacy SSE keeps
  // one instance per connection), aborts the run in the session; a dropped resumable stream only
  // if its client does not reconnect with Last-Event-ID in time (ExpertSession.streamDropped).
  // The client is gone by then and workerd ends this invocation right after the abort event:
  // without waitUntil the cancel RPC never leaves (measured in test/e2e/faults).
  const onAbort = () =>
    waitUntil(stream ? stub.streamDropped(stream.id, resumeGraceMs(expert.budget.timeout_ms)).catch(() => undefined) : stub.cancel(runId).catch(() => false));
  ctx.mcpReq.signal.addEventListener("abort", onAbort, { once: true });
  try {
    const decision = {
      ...(answer === undefined ? {} : { answer }),
      ...(approve === undefined ? {} : { approve }),
      // The user decided: a retry carrying their reply, or a click in the run view (run-app.ts).
      ...(retried || (client.ui && decidedInRunView(ctx)) ? { decidedBy: "user" as const } : {}),
      ...(refusal ? { refusal } : {}),
    };
    const result = await stub.callExpert(
      {
        runId,
        skill: skill.name,
        expert: expert.name,
        args,
        user,
        mcpRequest,
        ...originOf(env, ctx, origin),
        ...(thread ? { thread } : {}),
        ...(stream ? { stream } : {}),
        ...decision,
        ...(connecting?.accepted ? { awaitConnect: { flowId: connecting.flowId, connection: connecting.connection } } : {}),
      },
      onProgress,
      channel.kind === "elicit" ? channel.askUser : undefined,
      client.urlElicitation && client.era === "legacy" ? connectPrompter(ctx, expert, client.routed) : undefined,
    );
    // A 2026-07-28 client that declared URL-mode elicitation is asked to open the connect page; it retries the call after (unless the user declined).
    const askToConnect = client.era === "modern" && client.urlElicitation && !(connecting && !connecting.accepted);
    return (
      (askToConnect ? connectInputRequired(result) : undefined) ??
      (channel.kind === "input-required" ? inputRequiredFor(result) : undefined) ??
      toToolResult(result, expert.output_schema !== undefined)
    );
  } catch (error) {
    log("error", "expert session call failed", { runId, skill: skill.name, expert: expert.name, error: String(error) });
    // The session restarted under the call (a deploy, an eviction): its fresh instance closed the
    // run as interrupted, which the client can retry. A stub that saw the reset stays broken.
    const record = await sessionStub(env, skill.name, user.userId)
      .run(runId)
      .catch(() => null);
    if (record?.outcome === "interrupted") return toToolResult(interruptedRunResult(runId, record.startedAt), expert.output_schema !== undefined);
    return {
      isError: true,
      content: [
        {
          type: "text",
          text: `Expert "${expert.name}" could not run: its session failed (run ${runId}). Try again; if it persists, an admin can look up the run.`,
        },
      ],
    };
  } finally {
    ctx.mcpReq.signal.removeEventListener("abort", onAbort);
  }
}
