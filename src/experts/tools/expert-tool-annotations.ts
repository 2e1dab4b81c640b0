import type { DownstreamServerConfig, ExpertConfig, ToolPolicy } from "../../catalog/catalog-schema";
import type { DownstreamTool } from "../../downstream/downstream-types";
import { ToolListCache } from "../../downstream/tool-list-cache";
import { requiresApproval } from "./tool-approval";
import { globToRegExp, isToolAllowed, namespacedToolName } from "./tool-names";

/** The MCP ToolAnnotations an expert tool advertises (2025-06-18 and later). */
export interface ExpertToolAnnotations {
  title: string;
  readOnlyHint: boolean;
  destructiveHint?: boolean;
  openWorldHint: boolean;
}

/** Tool lists by server id; `undefined` for a server whose list is not cached (yet). */
export type CachedListings = ReadonlyMap<string, readonly DownstreamTool[] | undefined>;

/** `research_dependency` → "Research dependency": what a client shows when the catalog sets no `title`. */
export function expertTitle(expert: Pick<ExpertConfig, "name" | "title">): string {
  if (expert.title !== undefined) return expert.title;
  const words = expert.name
    .split(/[_.-]+/)
    .filter((word) => word.length > 0)
    .join(" ");
  return words.length === 0 ? expert.name : words.charAt(0).toUpperCase() + words.slice(1);
}

/**
 * What an expert may do, from what its whitelist may call, so a client can decide when to ask
 * the user first. The expert is read-only only when every whitelisted tool says so; destructive
 * when any may be; open-world when any may be. An unannotated tool, or a server whose list is
 * not known, counts with the spec's defaults for a tool without annotations (readOnlyHint false,
 * destructiveHint true, openWorldHint true): the conservative reading, since a client that
 * sees "read-only" may stop asking.
 */
export function deriveExpertAnnotations(expert: ExpertConfig, policy: ToolPolicy, listings: CachedListings): ExpertToolAnnotations {
  let readOnly = true;
  let destructive = false;
  let openWorld = false;
  for (const [serverId, whitelist] of Object.entries(expert.internal_tools)) {
    const listed = listings.get(serverId);
    if (listed === undefined) {
      readOnly = false;
      destructive = true;
      openWorld = true;
      continue;
    }
    const patterns = whitelist.map(globToRegExp);
    for (const tool of listed) {
      if (!patterns.some((pattern) => pattern.test(tool.name))) continue;
      if (!isToolAllowed(namespacedToolName(serverId, tool.name), policy)) continue;
      const hints = tool.annotations ?? {};
      const toolReadOnly = hints.readOnlyHint === true;
      if (!toolReadOnly) readOnly = false;
      // destructiveHint is meaningful only when readOnlyHint is false (spec), default true.
      if (!toolReadOnly && hints.destructiveHint !== false) destructive = true;
      if (hints.openWorldHint !== false) openWorld = true;
    }
  }
  return {
    title: expertTitle(expert),
    readOnlyHint: readOnly,
    ...(readOnly ? {} : { destructiveHint: destructive }),
    openWorldHint: openWorld,
  };
}

/**
 * Whether a call of this expert may stop for approval, given what its servers list: a
 * whitelisted tool the policy puts behind approval (tool-approval.ts). A server whose list is not
 * known may list one. Only then does the expert's schema need its `approve` argument.
 */
export function expertMayNeedApproval(expert: ExpertConfig, policy: ToolPolicy, listings: CachedListings): boolean {
  for (const [serverId, whitelist] of Object.entries(expert.internal_tools)) {
    const listed = listings.get(serverId);
    if (listed === undefined) return true;
    const patterns = whitelist.map(globToRegExp);
    for (const tool of listed) {
      if (!patterns.some((pattern) => pattern.test(tool.name))) continue;
      const name = namespacedToolName(serverId, tool.name);
      if (isToolAllowed(name, policy) && requiresApproval(name, tool, policy)) return true;
    }
  }
  return false;
}

/**
 * The skill's downstream tool lists as last known in KV, never asking a server: tools/list must
 * stay fast and must not connect downstream (nor read D1). The last known listing counts however
 * old: its tools are the ones that passed their pins, and a server that says its lists may not
 * be reused (`ttlMs: 0`) has not forgotten its tools. A list never stored (no run has listed
 * the server yet), or unreadable, is `undefined`, which deriveExpertAnnotations reads with the
 * spec's conservative defaults; the next expert run lists and stores it.
 */
export async function cachedListings(
  kv: KVNamespace,
  skill: string,
  servers: Readonly<Record<string, DownstreamServerConfig>>,
  experts: readonly ExpertConfig[],
): Promise<CachedListings> {
  const cache = new ToolListCache(kv, skill);
  const used = [...new Set(experts.flatMap((expert) => Object.keys(expert.internal_tools)))];
  const entries = await Promise.all(
    used.map(async (serverId) => {
      const config = servers[serverId];
      const cached = config ? await cache.known(serverId, config) : undefined;
      return [serverId, cached?.tools] as const;
    }),
  );
  return new Map(entries);
}
