import type { DownstreamServerConfig } from "../catalog/catalog-schema";
import type { DownstreamTool } from "./downstream-types";
import { sameListing, type CachedToolList, type ToolListCache } from "./tool-list-cache";
import { ToolPinCheckFailedError } from "./tool-pin-errors";
import { applyToolPins, type PinCheck, type PinDatabase } from "./tool-pins";

/** A fresh listing of one server, about to become its last known definitions. */
export interface FreshListing {
  skill: string;
  serverId: string;
  config: DownstreamServerConfig;
  tools: DownstreamTool[];
  ttlMs: number;
  /** The server's last known listing, if any (ToolListCache.known). */
  known: CachedToolList | undefined;
  now: number;
}

/**
 * The one way a listing becomes what experts and tools/list see: checked against the skill's
 * pins (a changed or, unless the server auto-approves, new tool is withheld), then stored as the
 * server's last known listing. Sessions list through it, and so does an admin's health probe,
 * so annotations are known before the first run (npm start probes the demo after loading it).
 * `where` is the shared KV entry (the account, for servers with `auth`), or `undefined` for a
 * listing whose account is not known: kept in the caller's memory only.
 */
export async function checkAndRecordListing(
  listing: FreshListing,
  pins: PinDatabase | undefined,
  cache: ToolListCache,
  where: { actingAs?: string } | undefined,
): Promise<CachedToolList> {
  const checked = unchangedSinceChecked(listing.known, listing.tools) ?? (await checkPins(listing, pins));
  return where === undefined
    ? cache.entry(checked.allowed, listing.ttlMs, checked.withheld)
    : cache.write(listing.serverId, listing.config, checked.allowed, listing.ttlMs, checked.withheld, where.actingAs, listing.known);
}

/**
 * A listing identical to the last known one, which was stored only after its pin check and
 * withheld nothing, passes that check again: only an admin's decision could change the answer,
 * and that decision deletes the known listing (tool-list-invalidation.ts). So a server whose
 * lists may not be reused (`ttlMs: 0`: listed on every run) costs no D1 round trip on a call's
 * path while its tools stay the same; any difference (a new tool, a changed one) is checked.
 */
function unchangedSinceChecked(known: CachedToolList | undefined, tools: readonly DownstreamTool[]): PinCheck | undefined {
  if (known === undefined || known.withheld.length > 0) return undefined;
  return sameListing(known, { tools, withheld: [] }) ? { allowed: [...tools], withheld: [] } : undefined;
}

async function checkPins(listing: FreshListing, pins: PinDatabase | undefined): Promise<PinCheck> {
  if (pins === undefined) return { allowed: listing.tools, withheld: [] };
  try {
    return await applyToolPins(pins, listing.skill, listing.serverId, listing.tools, listing.now, { holdNewTools: !listing.config.auto_approve_new_tools });
  } catch (error) {
    // Fail closed: unchecked definitions never reach the model.
    throw new ToolPinCheckFailedError(listing.serverId, String(error));
  }
}
