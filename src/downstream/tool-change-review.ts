import type { DownstreamTool } from "./downstream-types";
import { parseToolDefinition } from "./tool-definition";
import { NEVER_PINNED, type PinDatabase } from "./tool-pins";

/**
 * A tool waiting for an admin, as reviewed: `changed` (its live definition differs from its pin)
 * or `new` (the server added it after its first listing: nothing was pinned, `pinned` is null).
 */
export interface PendingToolChange {
  server: string;
  tool: string;
  change: "new" | "changed";
  firstSeenAt: number;
  pinned: { hash: string; definition: DownstreamTool | null; pinnedAt: number; pinnedBy: string } | null;
  pending: { hash: string; definition: DownstreamTool | null; seenAt: number };
}

export type AcceptOutcome =
  | { status: "accepted"; hash: string }
  | { status: "no-such-tool" }
  | { status: "nothing-pending"; pinnedHash: string }
  | { status: "stale"; pendingHash: string };

interface PendingRow {
  server_id: string;
  tool_name: string;
  first_seen_at: number;
  pinned_hash: string;
  pinned_json: string;
  pinned_at: number;
  pinned_by: string;
  pending_hash: string;
  pending_json: string;
  pending_seen_at: number;
}

/** Pending changes of one skill, oldest first (table: migrations/0002_tool_pins.sql). */
export async function listPendingToolChanges(db: PinDatabase, skill: string): Promise<PendingToolChange[]> {
  const { results } = await db
    .prepare(
      `SELECT server_id, tool_name, first_seen_at, pinned_hash, pinned_json, pinned_at, pinned_by, pending_hash, pending_json, pending_seen_at
       FROM tool_pins WHERE skill = ?1 AND pending_hash IS NOT NULL ORDER BY pending_seen_at, server_id, tool_name`,
    )
    .bind(skill)
    .all<PendingRow>();
  return results.map((row) => ({
    server: row.server_id,
    tool: row.tool_name,
    change: row.pinned_hash === NEVER_PINNED ? "new" : "changed",
    firstSeenAt: row.first_seen_at,
    pinned:
      row.pinned_hash === NEVER_PINNED
        ? null
        : { hash: row.pinned_hash, definition: parseToolDefinition(row.pinned_json), pinnedAt: row.pinned_at, pinnedBy: row.pinned_by },
    pending: { hash: row.pending_hash, definition: parseToolDefinition(row.pending_json), seenAt: row.pending_seen_at },
  }));
}

/**
 * Pins the pending definition, but only if it is still the one the admin reviewed
 * (`expectedHash`): a server that changed the tool again since then must be reviewed again.
 * The caller invalidates the cached tool lists (invalidateToolLists) so the next listing re-checks.
 */
export async function acceptToolChange(
  db: PinDatabase,
  skill: string,
  serverId: string,
  tool: string,
  expectedHash: string,
  acceptedBy: string,
  now: number = Date.now(),
): Promise<AcceptOutcome> {
  // SQLite evaluates every SET expression against the row as it was, so pinned_* take the old pending_*.
  const update = await db
    .prepare(
      `UPDATE tool_pins SET pinned_hash = pending_hash, pinned_json = pending_json, pinned_at = ?5, pinned_by = ?6,
         pending_hash = NULL, pending_json = NULL, pending_seen_at = NULL
       WHERE skill = ?1 AND server_id = ?2 AND tool_name = ?3 AND pending_hash = ?4`,
    )
    .bind(skill, serverId, tool, expectedHash, now, acceptedBy)
    .run();
  if (update.meta.changes > 0) return { status: "accepted", hash: expectedHash };
  const row = await db
    .prepare("SELECT pinned_hash, pending_hash FROM tool_pins WHERE skill = ?1 AND server_id = ?2 AND tool_name = ?3")
    .bind(skill, serverId, tool)
    .first<{ pinned_hash: string; pending_hash: string | null }>();
  if (row === null) return { status: "no-such-tool" };
  if (row.pending_hash === null) return { status: "nothing-pending", pinnedHash: row.pinned_hash };
  return { status: "stale", pendingHash: row.pending_hash };
}
