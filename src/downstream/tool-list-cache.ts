import { z } from "zod";
import type { DownstreamServerConfig } from "../catalog/catalog-schema";
import { log } from "../observability/logger";
import { downstreamToolsKey } from "../storage-keys";
import { serverConfigHash } from "./config-hash";
import { downstreamToolSchema } from "./downstream-tool-schema";
import type { DownstreamTool, WithheldTool } from "./downstream-types";

/** KV refuses an expirationTtl below 60 s; shorter TTLs are enforced through `expiresAt`. */
const KV_MIN_TTL_SECONDS = 60;

const cachedToolListSchema = z.object({
  tools: z.array(downstreamToolSchema),
  withheld: z.array(z.object({ name: z.string(), reason: z.string() })).optional(),
  fetchedAt: z.number(),
  expiresAt: z.number(),
});

export interface CachedToolList {
  /** Only tools that passed their pins (tool-pins.ts): what the experts may see and call. */
  tools: readonly DownstreamTool[];
  /** Tools the server listed that were left out, and why (for run notes and callTool refusals). */
  withheld: readonly WithheldTool[];
  fetchedAt: number;
  expiresAt: number;
}

/**
 * The effective TTL of a fresh listing: the configured tool_list_ttl_ms, or the server's own
 * `ttlMs` (2026-07-28 list results) when that is shorter.
 */
export function toolListTtlMs(config: DownstreamServerConfig, serverTtlMs: unknown): number {
  const configured = config.tool_list_ttl_ms;
  if (typeof serverTtlMs !== "number" || !Number.isFinite(serverTtlMs)) return configured;
  return Math.max(0, Math.min(configured, serverTtlMs));
}

/**
 * Tool lists of one skill's downstream servers in KV (binding CACHE), keyed by skill, server
 * and a hash of the server's config, so a warm Durable Object instance and a fresh one both
 * skip `tools/list`. A KV failure is a miss, never an error: the server is asked instead.
 */
export class ToolListCache {
  constructor(
    private readonly kv: KVNamespace,
    private readonly skill: string,
    private readonly now: () => number = Date.now,
  ) {}

  async read(serverId: string, config: DownstreamServerConfig): Promise<CachedToolList | undefined> {
    try {
      const raw = await this.kv.get(await this.key(serverId, config), "json");
      if (raw === null) return undefined;
      const parsed = cachedToolListSchema.safeParse(raw);
      if (!parsed.success || parsed.data.expiresAt <= this.now()) return undefined;
      const tools: DownstreamTool[] = parsed.data.tools;
      return { tools, withheld: parsed.data.withheld ?? [], fetchedAt: parsed.data.fetchedAt, expiresAt: parsed.data.expiresAt };
    } catch (error) {
      log("warn", "tool list cache read failed", { skill: this.skill, serverId, error: String(error) });
      return undefined;
    }
  }

  /** Builds the entry (also kept in memory by the pool) and stores it unless ttlMs is 0. */
  async write(
    serverId: string,
    config: DownstreamServerConfig,
    tools: readonly DownstreamTool[],
    ttlMs: number,
    withheld: readonly WithheldTool[] = [],
  ): Promise<CachedToolList> {
    const fetchedAt = this.now();
    const entry: CachedToolList = { tools, withheld, fetchedAt, expiresAt: fetchedAt + ttlMs };
    if (ttlMs <= 0) return entry;
    try {
      await this.kv.put(await this.key(serverId, config), JSON.stringify(entry), {
        expirationTtl: Math.max(KV_MIN_TTL_SECONDS, Math.ceil(ttlMs / 1000)),
      });
    } catch (error) {
      log("warn", "tool list cache write failed", { skill: this.skill, serverId, error: String(error) });
    }
    return entry;
  }

  private async key(serverId: string, config: DownstreamServerConfig): Promise<string> {
    return downstreamToolsKey(this.skill, serverId, await serverConfigHash(config));
  }
}
