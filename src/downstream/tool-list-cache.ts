import { z } from "zod";
import type { DownstreamServerConfig } from "../catalog/catalog-schema";
import { log } from "../observability/logger";
import { downstreamToolsKey } from "../storage-keys";
import { canonicalJson } from "./canonical-json";
import { serverConfigHash } from "./config-hash";
import { downstreamToolSchema } from "./downstream-tool-schema";
import type { DownstreamTool, WithheldTool } from "./downstream-types";

/**
 * How long KV keeps a listing past its `expiresAt`: as the server's last known definitions, which
 * the expert tools' annotations are derived from (a server that says `ttlMs: 0` still has tools).
 * Only a garbage-collection bound: a key of an old config hash nobody reads goes after a week.
 */
const KNOWN_LIST_KV_TTL_SECONDS = 7 * 24 * 3_600;

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
 * How long a read from KV is reused in this isolate: every tools/list reads the skill's lists
 * for annotations, and each read parses every tool's schema. KV itself may serve a value up to
 * 60 s old at another location, so a few seconds here change nothing a client can rely on.
 */
const READ_REUSE_MS = 5_000;
const MAX_REUSED_READS = 256;
/** An entry read from KV (or written to it) and when; `entry` undefined: KV had none (a miss is reused too). */
type RecentRead = { at: number; entry: CachedToolList | undefined };
/** Per KV binding (tests use several), by KV key. */
const recentReads = new WeakMap<KVNamespace, Map<string, RecentRead>>();

function readsOf(kv: KVNamespace): Map<string, RecentRead> {
  let reads = recentReads.get(kv);
  if (!reads) {
    reads = new Map();
    recentReads.set(kv, reads);
  }
  return reads;
}

/** Drops this isolate's reused reads of keys under `prefix` (tool-list-invalidation.ts deletes them from KV). */
export function forgetRecentReads(kv: KVNamespace, prefix: string): void {
  const reads = recentReads.get(kv);
  for (const key of reads?.keys() ?? []) if (key.startsWith(prefix)) reads?.delete(key);
}

/** Config hashes by config object: a compiled skill's server configs are shared until it reloads. */
const configHashes = new WeakMap<DownstreamServerConfig, Promise<string>>();

/**
 * Tool lists of one skill's downstream servers in KV (binding CACHE), keyed by skill, server
 * and a hash of the server's config, so a warm Durable Object instance and a fresh one both
 * skip `tools/list`. A KV failure is a miss, never an error: the server is asked instead.
 * A server with `auth` answers as the account whose token it got, so its lists carry
 * `actingAs` (the member, or the team) in their key: one member's listing never serves another.
 */
export class ToolListCache {
  constructor(
    private readonly kv: KVNamespace,
    private readonly skill: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** The listing calls may reuse without asking the server: one whose `expiresAt` has not passed. */
  async read(serverId: string, config: DownstreamServerConfig, actingAs?: string): Promise<CachedToolList | undefined> {
    const entry = await this.known(serverId, config, actingAs);
    return entry && entry.expiresAt > this.now() ? entry : undefined;
  }

  /**
   * The server's last known listing, expired or not: what its tools are, as last checked against
   * their pins. Annotations read this (a `ttlMs: 0` server must not count as "tools unknown");
   * calls never use an expired one without listing again (`read`).
   */
  async known(serverId: string, config: DownstreamServerConfig, actingAs?: string): Promise<CachedToolList | undefined> {
    try {
      const key = await this.key(serverId, config, actingAs);
      const now = this.now();
      const reads = readsOf(this.kv);
      const reused = reads.get(key);
      if (reused && now - reused.at < READ_REUSE_MS && now >= reused.at) return reused.entry;
      const raw = await this.kv.get(key, "json");
      const parsed = raw === null ? undefined : cachedToolListSchema.safeParse(raw);
      const entry = parsed?.success
        ? { tools: parsed.data.tools, withheld: parsed.data.withheld ?? [], fetchedAt: parsed.data.fetchedAt, expiresAt: parsed.data.expiresAt }
        : undefined;
      remember(reads, key, { at: now, entry });
      return entry;
    } catch (error) {
      log("warn", "tool list cache read failed", { skill: this.skill, serverId, error: String(error) });
      return undefined;
    }
  }

  /**
   * Builds the entry (also kept in memory by the pool) and stores it. A listing no call may reuse
   * (ttlMs 0) is stored too, as the last known definitions, but only when it differs from
   * `previous` (the known entry): such a server is listed on every run, and KV takes one write
   * per key per second.
   */
  async write(
    serverId: string,
    config: DownstreamServerConfig,
    tools: readonly DownstreamTool[],
    ttlMs: number,
    withheld: readonly WithheldTool[] = [],
    actingAs?: string,
    previous?: CachedToolList,
  ): Promise<CachedToolList> {
    const entry = this.entry(tools, ttlMs, withheld);
    if (ttlMs <= 0 && previous !== undefined && sameListing(previous, entry)) return entry;
    try {
      const key = await this.key(serverId, config, actingAs);
      remember(readsOf(this.kv), key, { at: entry.fetchedAt, entry });
      await this.kv.put(key, JSON.stringify(entry), {
        // The TTL itself is enforced through `expiresAt` (KV refuses an expirationTtl below 60 s).
        expirationTtl: Math.max(KNOWN_LIST_KV_TTL_SECONDS, Math.ceil(ttlMs / 1000)),
      });
    } catch (error) {
      log("warn", "tool list cache write failed", { skill: this.skill, serverId, error: String(error) });
    }
    return entry;
  }

  /** The entry for a fresh listing, kept in memory only (a listing whose account is not known is never shared). */
  entry(tools: readonly DownstreamTool[], ttlMs: number, withheld: readonly WithheldTool[] = []): CachedToolList {
    const fetchedAt = this.now();
    return { tools, withheld, fetchedAt, expiresAt: fetchedAt + ttlMs };
  }

  private async key(serverId: string, config: DownstreamServerConfig, actingAs: string | undefined): Promise<string> {
    let hash = configHashes.get(config);
    if (!hash) {
      hash = serverConfigHash(config);
      configHashes.set(config, hash);
    }
    return downstreamToolsKey(this.skill, serverId, await hash, actingAs);
  }
}

/** The same tools (definitions as the model sees them) and the same withheld names and reasons. */
export function sameListing(a: Pick<CachedToolList, "tools" | "withheld">, b: Pick<CachedToolList, "tools" | "withheld">): boolean {
  return canonicalJson({ tools: a.tools, withheld: a.withheld }) === canonicalJson({ tools: b.tools, withheld: b.withheld });
}

function remember(reads: Map<string, RecentRead>, key: string, read: RecentRead): void {
  if (reads.size >= MAX_REUSED_READS) reads.clear();
  reads.set(key, read);
}
