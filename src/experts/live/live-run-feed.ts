import { DurableObject } from "cloudflare:workers";
import { z } from "zod";
import { log } from "../../observability/logger";
import { type LiveEvent, type LiveMessage, type LiveRun, type LiveRunEnded, type LiveSnapshot, liveRunEndedSchema, liveRunSchema } from "./live-events";

/** Runs kept in flight at most; past it the oldest is dropped (a feed, not a record). */
export const MAX_LIVE_RUNS = 200;
/** A run with no end event after this is taken as gone (the longest wall-clock budget is 10 minutes). */
export const IN_FLIGHT_TTL_MS = 15 * 60_000;
/**
 * An ended run is kept this long, and at most MAX_RECENT_ENDED of them, so a page opened after
 * the runs ended shows them (and a late step event cannot bring one back; a step of a run the
 * feed does not know is ignored anyway).
 */
export const ENDED_TTL_MS = 15 * 60_000;
export const MAX_RECENT_ENDED = 20;
/** A socket lives at most this long: the browser reconnects, and the upgrade checks the admin again. */
export const SOCKET_TTL_MS = 15 * 60_000;
/** The header by which the dashboard tells the feed when the admin's session ends (only the Worker reaches the feed). */
export const SOCKET_EXPIRES_HEADER = "x-live-socket-expires";
/** The dashboard session (sid) and user behind a socket, so a sign-out or a revoke can close it. */
export const SOCKET_SESSION_HEADER = "x-live-socket-session";
export const SOCKET_USER_HEADER = "x-live-socket-user";

/** Which sockets to close: one dashboard session's, or every one of a user's. */
export type SocketOwner = { sid: string } | { userId: string };

const attachmentSchema = z.object({ expiresAt: z.number() });
const storedRunSchema = z.object({ run: z.string(), ended_at: z.number().nullable() });

/**
 * The live runs of a tenant, for the dashboard's live page: one object per tenant holds the
 * admins' WebSockets with the hibernation API (an idle feed costs nothing; Workers cannot
 * hibernate an SSE response, see docs/platform-notes.md#live-runs-over-websockets), keeps the runs
 * in flight in its own SQLite (bounded, expiring) so a page opened mid-run shows them, and pushes
 * each event the ExpertSessions publish to every socket. The upgrade reaching `fetch` has been
 * authorised by the dashboard (admin session cookie, same Origin).
 */
export class LiveRunFeed extends DurableObject<Env> {
  /** The alarm's time as last read or set; undefined until read in this instance. */
  private alarmAt: number | null | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec(
      `CREATE TABLE IF NOT EXISTS live_runs (run_id TEXT PRIMARY KEY, started_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, ended_at INTEGER, run TEXT NOT NULL)`,
    );
    // Keep-alives from the page are answered without waking the object.
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair("ping", "pong"));
  }

  override async fetch(request: Request): Promise<Response> {
    if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") return new Response("Expected a WebSocket upgrade.", { status: 426 });
    const now = Date.now();
    const sessionEnds = Number(request.headers.get(SOCKET_EXPIRES_HEADER));
    const expiresAt = Math.min(now + SOCKET_TTL_MS, Number.isFinite(sessionEnds) && sessionEnds > 0 ? sessionEnds : now + SOCKET_TTL_MS);
    const { 0: client, 1: server } = new WebSocketPair();
    const owners: SocketOwner[] = [];
    const sid = request.headers.get(SOCKET_SESSION_HEADER);
    const userId = request.headers.get(SOCKET_USER_HEADER);
    if (sid) owners.push({ sid });
    if (userId) owners.push({ userId });
    this.ctx.acceptWebSocket(server, await Promise.all(owners.map(ownerTag)));
    server.serializeAttachment({ expiresAt });
    server.send(JSON.stringify(this.snapshotMessage(now)));
    return new Response(null, { status: 101, webSocket: client });
  }

  /**
   * Called by ExpertSessions (never awaited on a run's path): stores what the events change and
   * pushes each to every socket. Answers whether any page is watching (live-publisher.ts skips
   * what only a watching page would see while none is).
   */
  async publish(events: readonly LiveEvent[]): Promise<boolean> {
    const now = Date.now();
    let added = false;
    for (const event of events) {
      if (!this.apply(event)) continue;
      added ||= event.type === "run-started" || event.type === "run-ended";
      this.broadcast(JSON.stringify(event satisfies LiveMessage), now);
    }
    // Only a new row can bring the next expiry forward; steps and waits never need the alarm moved.
    if (added) await this.armExpiry();
    return this.ctx.getWebSockets().length > 0;
  }

  /** The runs in flight, oldest first, for a page rendered without JavaScript. */
  async inFlight(now = Date.now()): Promise<LiveRun[]> {
    this.expire(now);
    return this.runsInFlight();
  }

  /** The runs in flight and those ended lately, for the page's first render. */
  async snapshot(now = Date.now()): Promise<LiveSnapshot> {
    return this.snapshotMessage(now);
  }

  /** Closes the sockets of a signed-out session or a revoked user now (the page then reconnects and is refused). */
  async closeSockets(owner: SocketOwner): Promise<number> {
    const sockets = this.ctx.getWebSockets(await ownerTag(owner));
    for (const ws of sockets) {
      try {
        ws.close(4003, "Signed out.");
      } catch {
        // Already closed.
      }
    }
    return sockets.length;
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    // The page sends nothing but keep-alives (auto-answered); anything else is asked for a snapshot.
    if (message === "snapshot") ws.send(JSON.stringify(this.snapshotMessage(Date.now())));
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    try {
      ws.close(code === 1005 || code === 1006 ? 1000 : code, reason);
    } catch {
      // Already closed by the runtime.
    }
  }

  override async alarm(): Promise<void> {
    // The alarm that fired is spent.
    this.alarmAt = null;
    this.expire(Date.now());
    await this.armExpiry();
  }

  /** Whether the event changes what an admin sees: a step of an unknown or ended run, or an old step, does not. */
  private apply(event: LiveEvent): boolean {
    const sql = this.ctx.storage.sql;
    if (event.type === "run-started") {
      const inserted = sql.exec(
        `INSERT INTO live_runs (run_id, started_at, updated_at, ended_at, run) VALUES (?, ?, ?, NULL, ?) ON CONFLICT (run_id) DO NOTHING`,
        event.run.runId,
        event.run.startedAt,
        event.at,
        JSON.stringify(event.run),
      ).rowsWritten;
      if (inserted === 0) return false;
      sql.exec(
        `DELETE FROM live_runs WHERE ended_at IS NULL AND run_id NOT IN (SELECT run_id FROM live_runs WHERE ended_at IS NULL ORDER BY updated_at DESC LIMIT ?)`,
        MAX_LIVE_RUNS,
      );
      return true;
    }
    const row = sql.exec(`SELECT run, ended_at FROM live_runs WHERE run_id = ?`, event.runId).toArray()[0];
    const stored = row === undefined ? undefined : storedRunSchema.safeParse(row);
    const run = stored?.success ? parseRun(stored.data.run) : undefined;
    if (event.type === "run-step" || event.type === "run-waiting") {
      if (!run || stored?.data?.ended_at !== null) return false;
      let next: LiveRun;
      if (event.type === "run-step") {
        if (event.step <= run.step) return false;
        next = { ...run, step: event.step, maxSteps: event.maxSteps, activity: event.activity, updatedAt: event.at };
      } else {
        const { waiting: _previous, ...rest } = run;
        next = { ...rest, ...(event.waiting ? { waiting: event.waiting } : {}), updatedAt: event.at };
      }
      sql.exec(`UPDATE live_runs SET updated_at = ?, run = ? WHERE run_id = ?`, event.at, JSON.stringify(next), event.runId);
      return true;
    }
    if (stored?.data?.ended_at !== null && stored?.data?.ended_at !== undefined) return false;
    // An ended run (also one that ended within the publisher's window, never stored) is kept as
    // its end event: names, counts and statuses only, like every event.
    sql.exec(
      `INSERT INTO live_runs (run_id, started_at, updated_at, ended_at, run) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (run_id) DO UPDATE SET updated_at = excluded.updated_at, ended_at = excluded.ended_at, run = excluded.run`,
      event.runId,
      event.at - event.elapsedMs,
      event.at,
      event.at,
      JSON.stringify(event),
    );
    sql.exec(
      `DELETE FROM live_runs WHERE ended_at IS NOT NULL AND run_id NOT IN (SELECT run_id FROM live_runs WHERE ended_at IS NOT NULL ORDER BY ended_at DESC, run_id LIMIT ?)`,
      MAX_RECENT_ENDED,
    );
    return true;
  }

  private broadcast(text: string, now: number): void {
    for (const ws of this.ctx.getWebSockets()) {
      const attachment = attachmentSchema.safeParse(ws.deserializeAttachment());
      try {
        if (!attachment.success || attachment.data.expiresAt <= now) ws.close(4001, "Sign-in check due: reconnect.");
        else ws.send(text);
      } catch (error) {
        log("warn", "live feed socket send failed", { error: String(error) });
      }
    }
  }

  private snapshotMessage(now: number): LiveSnapshot {
    this.expire(now);
    return { type: "snapshot", at: now, runs: this.runsInFlight(), recent: this.recentlyEnded() };
  }

  private recentlyEnded(): LiveRunEnded[] {
    const rows = this.ctx.storage.sql
      .exec(`SELECT run FROM live_runs WHERE ended_at IS NOT NULL ORDER BY ended_at DESC, run_id LIMIT ?`, MAX_RECENT_ENDED)
      .toArray();
    return rows.flatMap((row) => {
      const ended = typeof row.run === "string" ? parseJson(row.run, liveRunEndedSchema) : undefined;
      return ended ? [ended] : [];
    });
  }

  private runsInFlight(): LiveRun[] {
    const rows = this.ctx.storage.sql.exec(`SELECT run FROM live_runs WHERE ended_at IS NULL ORDER BY started_at, run_id`).toArray();
    return rows.flatMap((row) => {
      const run = typeof row.run === "string" ? parseRun(row.run) : undefined;
      return run ? [run] : [];
    });
  }

  private expire(now: number): void {
    this.ctx.storage.sql.exec(
      `DELETE FROM live_runs WHERE (ended_at IS NULL AND started_at < ?) OR (ended_at IS NOT NULL AND ended_at < ?)`,
      now - IN_FLIGHT_TTL_MS,
      now - ENDED_TTL_MS,
    );
  }

  /**
   * One alarm at the next expiry while anything is kept; none when the table is empty. The alarm
   * time is remembered in memory (re-read after hibernation), so a new run costs no storage read.
   */
  private async armExpiry(): Promise<void> {
    const next = this.ctx.storage.sql
      .exec(`SELECT MIN(CASE WHEN ended_at IS NULL THEN started_at + ? ELSE ended_at + ? END) AS due FROM live_runs`, IN_FLIGHT_TTL_MS, ENDED_TTL_MS)
      .toArray()[0]?.due;
    if (typeof next !== "number") {
      this.alarmAt = null;
      await this.ctx.storage.deleteAlarm();
      return;
    }
    if (this.alarmAt === undefined) this.alarmAt = await this.ctx.storage.getAlarm();
    if (this.alarmAt === null || this.alarmAt > next) {
      this.alarmAt = next;
      await this.ctx.storage.setAlarm(next);
    }
  }
}

function parseRun(text: string): LiveRun | undefined {
  return parseJson(text, liveRunSchema);
}

/** A stored row as its schema reads it; an unreadable one (e.g. '{}', an end stored before ends were kept) is skipped. */
function parseJson<T>(text: string, schema: z.ZodType<T>): T | undefined {
  try {
    const parsed = schema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** A hibernation tag (at most 256 characters): a digest, since a user id may be longer. */
async function ownerTag(owner: SocketOwner): Promise<string> {
  const [kind, value] = "sid" in owner ? ["session", owner.sid] : ["user", owner.userId];
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(value)));
  return `${kind}:${Array.from(digest, (byte) => byte.toString(16).padStart(2, "0")).join("")}`;
}

/** The tenant's one feed. */
export function liveFeedStub(env: Env): DurableObjectStub<LiveRunFeed> {
  return env.LIVE_FEED.get(env.LIVE_FEED.idFromName(env.TENANT));
}

/**
 * Closes the live sockets of a signed-out session or a revoked user. Best effort: the upgrade
 * checks the session again, and every socket ends by itself when its session would expire.
 */
export async function closeLiveSockets(env: Env, owner: SocketOwner): Promise<void> {
  await liveFeedStub(env)
    .closeSockets(owner)
    .catch((error: unknown) => log("warn", "live sockets not closed", { error: String(error) }));
}
