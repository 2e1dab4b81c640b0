import type { SkillConfig } from "../catalog/catalog-schema";
import { connectDownstream, type DownstreamConnection } from "../downstream/connect-downstream";
import { SlipsnisseError } from "../errors";

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
    Object.keys(config.servers).map((serverId) => withinDeadline(serverId, checkServer(env, serverId, config, connect), deadline, timeoutMs)),
  );
  return { skill, version, ok: servers.every((server) => server.ok), checkedAt: new Date().toISOString(), servers };
}

async function checkServer(env: Env, serverId: string, config: SkillConfig, connect: Connect): Promise<ServerHealth> {
  const server = config.servers[serverId];
  if (!server) throw new Error(`no server ${serverId}`);
  const started = Date.now();
  let connection: DownstreamConnection | undefined;
  try {
    connection = await connect(serverId, server, env);
    const connectMs = Date.now() - started;
    const { tools } = await connection.client.listTools(undefined, { timeout: server.call_timeout_ms });
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
      transport: connection.transport,
      ...(connection.protocolVersion === undefined ? {} : { protocolVersion: connection.protocolVersion }),
      ...(missingTools.length === 0
        ? {}
        : { missingTools, error: `the server does not list ${missingTools.map((m) => `"${m.tool}"`).join(", ")}, which experts whitelist` }),
    };
  } catch (error) {
    const message = SlipsnisseError.is(error) ? error.toolMessage : String(error);
    return { server: serverId, ok: false, latencyMs: Date.now() - started, error: connection ? connection.redact(message) : message };
  } finally {
    void connection?.close();
  }
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
