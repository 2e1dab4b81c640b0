import { log } from "../observability/logger";
import type { DownstreamTool, WithheldTool } from "./downstream-types";
import { CHANGED_DEFINITION_REASON, NEW_TOOL_REASON } from "./tool-pin-errors";
import { toolDefinition, type ToolDefinition } from "./tool-definition";
import { utf8Bytes } from "./tool-result-text";

/** What pinning needs of D1 (tests pass a counting wrapper). Table: migrations/0002_tool_pins.sql. */
export type PinDatabase = Pick<D1Database, "prepare" | "batch">;

export interface PinCheck {
  allowed: DownstreamTool[];
  withheld: WithheldTool[];
}

/** A definition this large is not stored (D1 rows stop at 2 MB) and its tool is withheld. */
export const MAX_PINNED_DEFINITION_BYTES = 100_000;
/** New pins travel as one JSON parameter per chunk, kept well under D1's 2 MB value limit. */
const INSERT_CHUNK_BYTES = 500_000;

interface PinRow {
  tool_name: string;
  pinned_hash: string;
  pending_hash: string | null;
}

/** `pinned_hash` of a tool held for review since first sight: nothing of it was ever approved. */
export const NEVER_PINNED = "";

export interface PinOptions {
  /**
   * Tools that appear after the server's first listing are held for review like changed ones
   * (a server that adds `search_exfil` under an expert's `search_*` must not reach the model
   * unreviewed). False for a server whose catalog entry sets `auto_approve_new_tools`.
   */
  holdNewTools: boolean;
}

/**
 * Checks a server's freshly listed tools against their pins. The server's first listing pins
 * every tool; a tool that appears later is held for review (unless the catalog opts out) as a
 * pending definition with nothing pinned; one that matches its pin passes; one that differs is
 * withheld and recorded as a pending change for an admin. The previously pinned definition is NOT served in its place: the
 * server's behaviour changed, so calling it under the old description would mislead the model
 * just the same. Runs on the cold listing path only; the pool caches the result.
 */
export async function applyToolPins(
  db: PinDatabase,
  skill: string,
  serverId: string,
  liveTools: readonly DownstreamTool[],
  now: number = Date.now(),
  options: PinOptions = { holdNewTools: true },
): Promise<PinCheck> {
  const withheld: WithheldTool[] = [];
  const candidates = await uniqueDefinitions(liveTools, withheld);
  if (candidates.length === 0) return { allowed: [], withheld };

  const pins = await pinAndRead(db, skill, serverId, candidates, now, options.holdNewTools);
  const allowed: DownstreamTool[] = [];
  const updates: D1PreparedStatement[] = [];
  for (const definition of candidates) {
    const name = definition.tool.name;
    const pin = pins.get(name);
    if (pin?.pinned_hash === definition.hash) {
      allowed.push(definition.tool);
      // The server went back to the pinned definition: nothing is left for an admin to decide.
      if (pin.pending_hash !== null) {
        log("warn", "downstream tool reverted to its pinned definition", { skill, serverId, tool: name });
        updates.push(clearPending(db, skill, serverId, name, definition.hash));
      }
      continue;
    }
    if (pin === undefined) {
      withheld.push({ name, reason: "could not be pinned" }); // cannot happen after pinAndRead; fail closed anyway
      continue;
    }
    withheld.push({ name, reason: pin.pinned_hash === NEVER_PINNED ? NEW_TOOL_REASON : CHANGED_DEFINITION_REASON });
    if (pin.pending_hash !== definition.hash) {
      log("warn", "downstream tool changed its definition; withheld", { skill, serverId, tool: name, pinned: pin.pinned_hash, live: definition.hash });
      updates.push(recordPending(db, skill, serverId, definition, now));
    }
  }
  if (updates.length > 0) await db.batch(updates);
  return { allowed, withheld };
}

/** One definition per name; oversized ones and names listed twice with different definitions are withheld. */
async function uniqueDefinitions(liveTools: readonly DownstreamTool[], withheld: WithheldTool[]): Promise<ToolDefinition[]> {
  const byName = new Map<string, ToolDefinition[]>();
  for (const definition of await Promise.all(liveTools.map(toolDefinition))) {
    byName.set(definition.tool.name, [...(byName.get(definition.tool.name) ?? []), definition]);
  }
  const unique: ToolDefinition[] = [];
  for (const [name, definitions] of byName) {
    const [first] = definitions;
    if (first === undefined) continue;
    const bytes = utf8Bytes(first.json);
    if (definitions.some((other) => other.hash !== first.hash)) {
      withheld.push({ name, reason: "is listed more than once with different definitions, so no single definition can be pinned" });
    } else if (bytes > MAX_PINNED_DEFINITION_BYTES) {
      withheld.push({ name, reason: `has a definition of ${bytes} bytes, over the ${MAX_PINNED_DEFINITION_BYTES}-byte limit for pinned tools` });
    } else {
      unique.push(first);
    }
  }
  return unique;
}

/**
 * Records every tool not known yet and reads all pins of the server, in one D1 batch (one
 * transaction). On the server's first listing (no row of an earlier listing: `first_seen_at`
 * other than this one's `now`, so the chunks of one listing count as one) each tool is pinned;
 * later, with `holdNewTools`, a new tool is stored with nothing pinned and its definition
 * pending review. INSERT ... DO NOTHING makes concurrent sessions agree: whichever records
 * first wins, and the other compares its listing against that row like any later listing.
 */
async function pinAndRead(
  db: PinDatabase,
  skill: string,
  serverId: string,
  definitions: readonly ToolDefinition[],
  now: number,
  holdNewTools: boolean,
): Promise<Map<string, PinRow>> {
  const inserts = chunks(definitions).map((chunk) =>
    db
      .prepare(
        `INSERT INTO tool_pins (skill, server_id, tool_name, pinned_hash, pinned_json, first_seen_at, pinned_at, pinned_by, pending_hash, pending_json, pending_seen_at)
         SELECT ?1, ?2, json_extract(t.value, '$.name'),
           CASE WHEN listed.held THEN ?6 ELSE json_extract(t.value, '$.hash') END,
           CASE WHEN listed.held THEN ?6 ELSE json_extract(t.value, '$.json') END,
           ?3, ?3, CASE WHEN listed.held THEN 'new' ELSE 'first-use' END,
           CASE WHEN listed.held THEN json_extract(t.value, '$.hash') END,
           CASE WHEN listed.held THEN json_extract(t.value, '$.json') END,
           CASE WHEN listed.held THEN ?3 END
         FROM json_each(?4) AS t,
           (SELECT ?5 AND EXISTS (SELECT 1 FROM tool_pins WHERE skill = ?1 AND server_id = ?2 AND first_seen_at <> ?3) AS held) AS listed
         WHERE true
         ON CONFLICT (skill, server_id, tool_name) DO NOTHING`,
      )
      .bind(skill, serverId, now, JSON.stringify(chunk.map(({ tool, hash, json }) => ({ name: tool.name, hash, json }))), holdNewTools ? 1 : 0, NEVER_PINNED),
  );
  const select = db.prepare("SELECT tool_name, pinned_hash, pending_hash FROM tool_pins WHERE skill = ?1 AND server_id = ?2").bind(skill, serverId);
  const results = await db.batch<PinRow>([...inserts, select]);
  const rows = results.at(-1)?.results ?? [];
  return new Map(rows.map((row) => [row.tool_name, row]));
}

function chunks(definitions: readonly ToolDefinition[]): ToolDefinition[][] {
  const out: ToolDefinition[][] = [];
  let current: ToolDefinition[] = [];
  let bytes = 0;
  for (const definition of definitions) {
    const size = utf8Bytes(definition.json) * 2; // JSON-in-JSON escapes roughly double it at worst
    if (current.length > 0 && bytes + size > INSERT_CHUNK_BYTES) {
      out.push(current);
      current = [];
      bytes = 0;
    }
    current.push(definition);
    bytes += size;
  }
  if (current.length > 0) out.push(current);
  return out;
}

/** Keeps the first time a pending definition was seen; never overwrites a pin an admin just set to this hash. */
function recordPending(db: PinDatabase, skill: string, serverId: string, definition: ToolDefinition, now: number): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE tool_pins SET pending_hash = ?4, pending_json = ?5, pending_seen_at = ?6
       WHERE skill = ?1 AND server_id = ?2 AND tool_name = ?3 AND pinned_hash <> ?4 AND pending_hash IS NOT ?4`,
    )
    .bind(skill, serverId, definition.tool.name, definition.hash, definition.json, now);
}

function clearPending(db: PinDatabase, skill: string, serverId: string, name: string, pinnedHash: string): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE tool_pins SET pending_hash = NULL, pending_json = NULL, pending_seen_at = NULL
       WHERE skill = ?1 AND server_id = ?2 AND tool_name = ?3 AND pinned_hash = ?4`,
    )
    .bind(skill, serverId, name, pinnedHash);
}
