import type { DownstreamServerConfig } from "../catalog/catalog-schema";
import { log } from "../observability/logger";
import { downstreamUpKey } from "../storage-keys";
import { serverConfigHash } from "./config-hash";

/**
 * Long enough to outlive any session's back-off (DEFAULT_BACKOFF.maxMs is 60 s) with room for
 * clock skew between locations; a mark only counts for a session whose failure came before it.
 */
const MARK_TTL_SECONDS = 600;
/** KV takes one write per key per second; a burst of sessions recovering in one isolate writes once. */
const MIN_WRITE_INTERVAL_MS = 1_000;
/** KV's shortest edge cache for a read (the default is 60 s): how late another location may see a mark. */
const READ_CACHE_TTL_SECONDS = 30;

/** When this isolate last wrote each key (per KV binding: tests use several). */
const lastWrites = new WeakMap<KVNamespace, Map<string, number>>();

/**
 * "Server X of skill S is back since T", shared by the skill's sessions (each user's
 * ExpertSession backs off on its own). A session that recovers, and a health probe that reaches
 * the server, write it; a session reads it only while it is backing off from that server, so a
 * healthy call never touches it. Another location sees a new mark within KV's propagation (its
 * edge cache of a read is kept to KV's shortest, 30 s); the location that wrote it at once.
 * The mark says nothing a caller could misuse: the key is the skill, server and config hash
 * (no secret feeds it), the value a time.
 */
export class ServerRecoveryBoard {
  constructor(
    private readonly kv: KVNamespace,
    private readonly skill: string,
  ) {}

  /** Records that the server answered at `at` (ms); never throws (a failed write only costs the others their wait). */
  async announce(serverId: string, config: DownstreamServerConfig, at: number): Promise<void> {
    try {
      const key = await this.key(serverId, config);
      let writes = lastWrites.get(this.kv);
      if (!writes) {
        writes = new Map();
        lastWrites.set(this.kv, writes);
      }
      const last = writes.get(key);
      if (last !== undefined && at - last < MIN_WRITE_INTERVAL_MS && at >= last) return;
      writes.set(key, at);
      await this.kv.put(key, JSON.stringify({ at }), { expirationTtl: MARK_TTL_SECONDS });
    } catch (error) {
      log("warn", "server recovery mark not written", { skill: this.skill, serverId, error: String(error) });
    }
  }

  /** When the server was last seen answering, if a mark says so; a failed read is no mark. */
  async backSince(serverId: string, config: DownstreamServerConfig): Promise<number | undefined> {
    try {
      const raw: unknown = await this.kv.get(await this.key(serverId, config), { type: "json", cacheTtl: READ_CACHE_TTL_SECONDS });
      const at: unknown = typeof raw === "object" && raw !== null ? Reflect.get(raw, "at") : undefined;
      return typeof at === "number" && Number.isFinite(at) ? at : undefined;
    } catch (error) {
      log("warn", "server recovery mark not read", { skill: this.skill, serverId, error: String(error) });
      return undefined;
    }
  }

  private async key(serverId: string, config: DownstreamServerConfig): Promise<string> {
    return downstreamUpKey(this.skill, serverId, await serverConfigHash(config));
  }
}
