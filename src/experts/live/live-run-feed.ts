import { DurableObject } from "cloudflare:workers";
import { z } from "zod";
import { log } from "../../observability/logger";
import { type LiveEvent, type LiveMessage, type LiveRun, liveRunSchema } from "./live-events";

/** Runs kept in flight at most; past it the oldest is dropped (a feed, not a record). */
export const MAX_LIVE_RUNS = 200;
/** A run with no end event after this is taken as gone (the longest wall-clock budget is 10 minutes). */
export const IN_FLIGHT_TTL_MS = 15 * 60_000;
/** An ended run is remembered this long, so a late step event cannot bring it back. */
export const ENDED_TTL_MS = 5 * 60_000;
/** A socket lives at most this long: the browser reconnects, and the upgrade checks the admin again. */
export const SOCKET_TTL_MS = 15 * 60_000;
/** The header by which the dashboard tells the feed when the admin's session ends (only the Worker reaches the feed). */
export const SOCKET_EXPIRES_HEADER = "x-live-socket-expires";

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
    this.ctx.acceptWebSocket(server);
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
    let started = false;
    for (const event of events) {
      if (!this.apply(event)) continue;
      started ||= event.type === "run-started";
      this.broadcast(JSON.stringify(event satisfies LiveMessage), now);
    }
    // Only a new run can bring the next expiry forward; steps and ends never need the alarm moved.
    if (started) await this.armExpiry();
    return this.ctx.getWebSockets().length > 0;
  }

  /** The runs in flight, oldest first, for a page rendered without JavaScript. */
  async inFlight(now = Date.now()): Promise<LiveRun[]> {
    this.expire(now);
    return this.runsInFlight();
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
    if (event.type === "run-step") {
      if (!run || stored?.data?.ended_at !== null || event.step <= run.step) return false;
      const next: LiveRun = { ...run, step: event.step, maxSteps: event.maxSteps, activity: event.activity, updatedAt: event.at };
      sql.exec(`UPDATE live_runs SET updated_at = ?, run = ? WHERE run_id = ?`, event.at, JSON.stringify(next), event.runId);
      return true;
    }
    if (stored?.data?.ended_at !== null && stored?.data?.ended_at !== undefined) return false;
    // An end of a run the feed never stored (it ended within the publisher's window) is only
    // passed on: nothing of it was shown, and nothing of it can follow.
    if (row === undefined) return true;
    sql.exec(
      `INSERT INTO live_runs (run_id, started_at, updated_at, ended_at, run) VALUES (?, ?, ?, ?, '{}')
       ON CONFLICT (run_id) DO UPDATE SET updated_at = excluded.updated_at, ended_at = excluded.ended_at`,
      event.runId,
      event.at - event.elapsedMs,
      event.at,
      event.at,
    );
    sql.exec(
      `DELETE FROM live_runs WHERE ended_at IS NOT NULL AND run_id NOT IN (SELECT run_id FROM live_runs WHERE ended_at IS NOT NULL ORDER BY ended_at DESC LIMIT ?)`,
      MAX_LIVE_RUNS,
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

  private snapshotMessage(now: number): LiveMessage {
    this.expire(now);
    return { type: "snapshot", at: now, runs: this.runsInFlight() };
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
  try {
    const parsed = liveRunSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** The tenant's one feed. */
export function liveFeedStub(env: Env): DurableObjectStub<LiveRunFeed> {
  return env.LIVE_FEED.get(env.LIVE_FEED.idFromName(env.TENANT));
}
