import type { SkillConfig } from "../catalog/catalog-schema";
import { connectDownstream, connectionRequired, type DownstreamConnection } from "../downstream/connect-downstream";
import { connectionTarget } from "../downstream/connections/connection-target";
import { probeSignIn } from "../downstream/connections/sign-in-probe";
import { ServerRecoveryBoard } from "../downstream/server-recovery";
import { connectionTokenSource, type TokenSource } from "../downstream/connections/token-source";
import { checkAndRecordListing } from "../downstream/checked-listing";
import { toDownstreamTool } from "../downstream/downstream-tool-schema";
import type { DownstreamTool } from "../downstream/downstream-types";
import { redactDeep } from "../downstream/secret-headers";
import { ToolListCache, toolListTtlMs } from "../downstream/tool-list-cache";
import { SlipsnisseError } from "../errors";
import { log } from "../observability/logger";

/** Whom a server with `auth` answers as, for health: a probe never holds a member's token. */
export type SignInHealth =
  /** Per-member connections: probed without credentials; up, and each member signs in. */
  | "needs-each-member"
  /** The team's connection: probed with the team's token. */
  | "team-connected"
  /** The team's connection is missing: probed without credentials; an admin must connect it. */
  | "team-not-connected";

export interface MissingTool {
  expert: string;
  tool: string;
}

export interface ServerHealth {
  server: string;
  ok: boolean;
  /** Connect plus tools/list, in ms (workerd's clock moves only across I/O, so it is coarse). */
  latencyMs: number;
  connectMs?: number;
  toolCount?: number;
  transport?: string;
  protocolVersion?: string;
  /** Tools an expert whitelists on this server that the server does not list. */
  missingTools?: MissingTool[];
  /** Servers with `auth` only: how the probe reached it and what a call needs. */
  signIn?: SignInHealth;
  /** What the probe found that is not an error (a server that needs each member's sign-in). */
  note?: string;
  error?: string;
}

/** connectDownstream, or a stand-in (tests use one that never answers to prove the bound). */
export type Connect = typeof connectDownstream;

export interface SkillHealth {
  skill: string;
  version: number;
  ok: boolean;
  checkedAt: string;
  servers: ServerHealth[];
}

/**
 * Connects to every downstream server of the skill at once (a fresh connection, not the
 * sessions' warm ones, so it proves the server is reachable now), lists its tools and closes.
 * The whole check is bounded by `timeoutMs`; a server that has not answered by then is reported
 * as timed out and its late connection is closed when it arrives.
 */
export async function checkSkillHealth(
  env: Env,
  skill: string,
  version: number,
  config: SkillConfig,
  timeoutMs: number,
  connect: Connect = connectDownstream,
): Promise<SkillHealth> {
  const deadline = AbortSignal.timeout(timeoutMs);
  const servers = await Promise.all(
    Object.keys(config.servers).map((serverId) => withinDeadline(serverId, checkServer(env, skill, serverId, config, connect), deadline, timeoutMs)),
  );
  return { skill, version, ok: servers.every((server) => server.ok), checkedAt: new Date().toISOString(), servers };
}

/** The user a team connection's token is asked for on behalf of (the team's object ignores it). */
const HEALTH_PROBE_USER = "slipsnisse:health";

async function checkServer(env: Env, skill: string, serverId: string, config: SkillConfig, connect: Connect): Promise<ServerHealth> {
  const server = config.servers[serverId];
  if (!server) throw new Error(`no server ${serverId}`);
  const target = connectionTarget(skill, serverId, server);
  // Per-member servers: no member's token is the probe's to use, so it asks only whether the
  // server is up and asks for a sign-in (docs/catalog.md#connections).
  if (target?.connection === "user") return checkSignIn(env, serverId, server, "needs-each-member");
  const tokens: TokenSource | undefined = target === undefined ? undefined : connectionTokenSource(env, target, HEALTH_PROBE_USER);
  const started = Date.now();
  let connection: DownstreamConnection | undefined;
  try {
    connection = await connect(serverId, server, env, tokens);
    const connectMs = Date.now() - started;
    const listed = await connection.client.listTools(undefined, { timeout: server.call_timeout_ms });
    const { tools } = listed;
    // Sessions backing off from this server may retry now (server-recovery.ts).
    await new ServerRecoveryBoard(env.CACHE, skill).announce(serverId, server, Date.now());
    if (target === undefined) await recordListing(env, skill, serverId, server, listed, connection);
    const names = new Set(tools.map((tool) => tool.name));
    const missingTools = config.experts.flatMap((expert) =>
      (expert.internal_tools[serverId] ?? []).filter((tool) => !names.has(tool)).map((tool) => ({ expert: expert.name, tool })),
    );
    return {
      server: serverId,
      ok: missingTools.length === 0,
      latencyMs: Date.now() - started,
      connectMs,
      toolCount: tools.length,
      ...(tokens === undefined ? {} : { signIn: "team-connected" as const }),
      transport: connection.transport,
      ...(connection.protocolVersion === undefined ? {} : { protocolVersion: connection.protocolVersion }),
      ...(missingTools.length === 0
        ? {}
        : { missingTools, error: `the server does not list ${missingTools.map((m) => `"${m.tool}"`).join(", ")}, which experts whitelist` }),
    };
  } catch (error) {
    // The team's connection is missing (or its refresh failed): say so, and whether the server is up.
    const needed = tokens === undefined ? undefined : connectionRequired(error);
    if (needed !== undefined) {
      // No one signs in to a client-credentials server: what failed is the token request itself.
      if (target?.grant === "client_credentials")
        return { server: serverId, ok: false, latencyMs: Date.now() - started, signIn: "team-not-connected", error: needed.message };
      return checkSignIn(env, serverId, server, "team-not-connected");
    }
    const message = SlipsnisseError.is(error) ? error.toolMessage : String(error);
    return { server: serverId, ok: false, latencyMs: Date.now() - started, error: connection ? connection.redact(message) : message };
  } finally {
    void connection?.close();
  }
}

/**
 * The probe's listing becomes the server's last known one, through the same pin check a session's
 * listing passes, so tools/list knows the tools' annotations before any run has listed them.
 * Only for servers without `auth`: another account's listing never speaks for a member's.
 * A failure here (D1 unreachable for the pins) leaves the health answer as it is.
 */
async function recordListing(
  env: Env,
  skill: string,
  serverId: string,
  server: SkillConfig["servers"][string],
  listed: Awaited<ReturnType<DownstreamConnection["client"]["listTools"]>>,
  connection: DownstreamConnection,
): Promise<void> {
  const cache = new ToolListCache(env.CACHE, skill);
  try {
    const tools = listed.tools.map((tool) => toDownstreamTool(redactDeep(tool, connection.redact))).filter((tool): tool is DownstreamTool => tool !== null);
    const known = await cache.known(serverId, server);
    const ttlMs = toolListTtlMs(server, Reflect.get(listed, "ttlMs"));
    await checkAndRecordListing({ skill, serverId, config: server, tools, ttlMs, known, now: Date.now() }, env.DB, cache, {});
  } catch (error) {
    log("warn", "health probe listing not recorded", { skill, serverId, error: String(error) });
  }
}

/**
 * A server with `auth` probed without credentials (probeSignIn). Per-member: up and asking for a
 * sign-in is healthy, never an error. Team, not connected: not usable until an admin connects it.
 */
async function checkSignIn(
  env: Env,
  serverId: string,
  server: SkillConfig["servers"][string],
  signIn: "needs-each-member" | "team-not-connected",
): Promise<ServerHealth> {
  const started = Date.now();
  const probe = await probeSignIn(serverId, server, env);
  const latencyMs = Date.now() - started;
  if (!probe.reachable) {
    const team = signIn === "team-not-connected" ? "not connected for the team, and " : "";
    return { server: serverId, ok: false, latencyMs, signIn, error: `${team}probed without credentials, ${probe.reason}` };
  }
  const up = probe.asksSignIn ? "reachable, and asks for a sign-in" : `reachable (it answered HTTP ${probe.status} without asking for a sign-in)`;
  if (signIn === "team-not-connected")
    return {
      server: serverId,
      ok: false,
      latencyMs,
      signIn,
      error: `not connected for the team: an admin connects it on the dashboard's Connections page (the server is ${up})`,
    };
  return {
    server: serverId,
    ok: true,
    latencyMs,
    signIn,
    note: `needs each member's sign-in; the server is ${up}. Its tools are listed per member, so none are counted here.`,
  };
}

function withinDeadline(serverId: string, check: Promise<ServerHealth>, deadline: AbortSignal, timeoutMs: number): Promise<ServerHealth> {
  const started = Date.now();
  return new Promise((resolve) => {
    const onTimeout = () =>
      resolve({ server: serverId, ok: false, latencyMs: Date.now() - started, error: `no answer within the health check's ${timeoutMs} ms` });
    if (deadline.aborted) return onTimeout();
    deadline.addEventListener("abort", onTimeout, { once: true });
    void check.then((health) => {
      deadline.removeEventListener("abort", onTimeout);
      resolve(health);
    });
  });
}
