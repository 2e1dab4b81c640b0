import { latencySummary } from "./percentiles";

/** The run_tool_calls columns server usage adds up. */
export interface ServerCall {
  skill: string;
  server_id: string;
  status: string;
  elapsed_ms: number;
  error: string | null;
  at: number;
}

export interface ServerWindow {
  calls: number;
  errors: number;
  latencyMs: { p50: number | null; p95: number | null };
  lastError: { at: number; message: string } | null;
}

export interface ServerUsage {
  skill: string;
  server: string;
  lastHour: ServerWindow;
  lastDay: ServerWindow;
}

/** Refused and withheld calls never reached the server: they are not its calls. */
const REACHED_SERVER = new Set(["ok", "truncated", "error", "cancelled"]);
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** Per skill and server: calls, errors, latency and the last error, over the last hour and day before `now`. */
export function aggregateServerUsage(calls: readonly ServerCall[], now: number): ServerUsage[] {
  const byServer = new Map<string, ServerCall[]>();
  for (const call of calls) {
    if (!REACHED_SERVER.has(call.status) || call.at > now || call.at < now - DAY_MS) continue;
    const key = JSON.stringify([call.skill, call.server_id]);
    const list = byServer.get(key) ?? [];
    list.push(call);
    byServer.set(key, list);
  }
  return [...byServer.values()]
    .map((list) => ({
      skill: list[0]?.skill ?? "",
      server: list[0]?.server_id ?? "",
      lastHour: serverWindow(list.filter((call) => call.at >= now - HOUR_MS)),
      lastDay: serverWindow(list),
    }))
    .sort((a, b) => a.skill.localeCompare(b.skill) || a.server.localeCompare(b.server));
}

function serverWindow(calls: readonly ServerCall[]): ServerWindow {
  const errors = calls.filter((call) => call.status === "error");
  const last = errors.reduce<ServerCall | undefined>((latest, call) => (latest === undefined || call.at >= latest.at ? call : latest), undefined);
  return {
    calls: calls.length,
    errors: errors.length,
    latencyMs: latencySummary(calls.map((call) => call.elapsed_ms)),
    lastError: last ? { at: last.at, message: last.error ?? "the tool reported an error" } : null,
  };
}
