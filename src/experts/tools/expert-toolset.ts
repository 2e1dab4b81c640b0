import type { ToolSet } from "ai";
import type { ExpertConfig, ToolPolicy } from "../../catalog/catalog-schema";
import type { DownstreamTool, WithheldTool } from "../../downstream/downstream-types";
import { redactCredentialShapes } from "../models/redact-credentials";
import { ExpertToolsUnavailableError } from "./tool-errors";
import { downstreamTool } from "./tool-adapter";
import type { ToolAdapterContext } from "./tool-adapter";
import { globToRegExp, isToolAllowed, modelSafeToolName, namespacedToolName } from "./tool-names";
import { gatedTool, requiresApproval } from "./tool-approval";

export interface ExpertToolset {
  tools: ToolSet;
  /** Model-facing names, in the order they were added. */
  names: string[];
  /** What was left out and why (for the run record). */
  notes: string[];
  /** Servers whose tools were left out because listing them failed. */
  failedServers: Array<{ serverId: string; reason: string }>;
  /** Tools that need approval before a call runs, by model-facing name, with their server and tool. */
  gated: Map<string, { server: string; tool: string }>;
  /** Every tool ungated (as the adapter runs it): what a resumed run executes once a call is approved. */
  ungated: ToolSet;
}

/**
 * The tools the expert's model may call: its `internal_tools` whitelist (exact names or globs),
 * as listed now by each server, filtered by the skill's tool policy. A failed server removes
 * only its own tools, unless that leaves the expert with none of its tools.
 */
export async function buildExpertToolset(expert: ExpertConfig, policy: ToolPolicy, ctx: ToolAdapterContext, signal: AbortSignal): Promise<ExpertToolset> {
  const servers = Object.entries(expert.internal_tools);
  const listings = await Promise.allSettled(servers.map(([serverId]) => ctx.source.listTools(serverId, { signal })));
  const toolset: ExpertToolset = { tools: {}, names: [], notes: [], failedServers: [], gated: new Map(), ungated: {} };
  const taken = new Set<string>();

  servers.forEach(([serverId, whitelist], i) => {
    const listing = listings[i];
    if (!listing || listing.status === "rejected") {
      const reason = redactCredentialShapes(listing?.reason instanceof Error ? listing.reason.message : String(listing?.reason));
      toolset.failedServers.push({ serverId, reason });
      ctx.recorder.markUnavailable({ server: serverId, reason });
      toolset.notes.push(`server "${serverId}" is unavailable (${reason}); its tools were left out`);
      return;
    }
    const withheld = ctx.source.withheldTools?.(serverId) ?? [];
    for (const tool of selectWhitelisted(listing.value, whitelist, serverId, toolset.notes, withheld)) {
      const name = namespacedToolName(serverId, tool.name);
      if (!isToolAllowed(name, policy)) {
        toolset.notes.push(`${name} is blocked by the skill's tool policy`);
        continue;
      }
      const exposed = modelSafeToolName(name, taken);
      const adapted = downstreamTool(ctx, serverId, tool, exposed);
      toolset.ungated[exposed] = adapted;
      if (ctx.approval && requiresApproval(name, tool, policy)) {
        toolset.gated.set(exposed, { server: serverId, tool: tool.name });
        toolset.tools[exposed] = gatedTool(adapted, { recorder: ctx.recorder, server: serverId, tool: tool.name, exposedName: exposed }, ctx.approval);
      } else {
        toolset.tools[exposed] = adapted;
      }
      toolset.names.push(exposed);
    }
  });

  if (toolset.names.length === 0 && toolset.failedServers.length > 0) {
    throw new ExpertToolsUnavailableError(expert.name, toolset.failedServers, ctx.source.skill);
  }
  return toolset;
}

function selectWhitelisted(
  listed: readonly DownstreamTool[],
  whitelist: readonly string[],
  serverId: string,
  notes: string[],
  withheld: readonly WithheldTool[],
): DownstreamTool[] {
  const selected = new Map<string, DownstreamTool>();
  for (const entry of whitelist) {
    const pattern = globToRegExp(entry);
    // Sorted by name: a glob's matches would otherwise follow the server's listing order, which may
    // change between listings and so change the prompt prefix providers cache across calls.
    const matches = listed.filter((tool) => pattern.test(tool.name)).sort(byName);
    // A whitelisted tool the source withheld (e.g. its definition changed since it was pinned).
    const held = withheld.filter((tool) => pattern.test(tool.name));
    for (const tool of held) {
      const note = `tool "${tool.name}" on server "${serverId}" ${tool.reason}`;
      if (!notes.includes(note)) notes.push(note);
    }
    if (matches.length === 0 && held.length === 0) notes.push(`${namespacedToolName(serverId, entry)} is whitelisted but "${serverId}" does not list it`);
    for (const tool of matches) selected.set(tool.name, tool);
  }
  return [...selected.values()];
}

/** Code-unit order, the same in every locale and runtime. */
function byName(a: DownstreamTool, b: DownstreamTool): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}
