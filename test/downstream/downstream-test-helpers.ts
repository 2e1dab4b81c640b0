import { env } from "cloudflare:test";
import { inject } from "vitest";
import { downstreamServerSchema, type DownstreamServerConfig } from "../../src/catalog/catalog-schema";
import { DownstreamPool, type DownstreamPoolOptions } from "../../src/downstream/downstream-pool";
import { taggedBase } from "../fixtures/fixture-stats-client";

export const fixtures = inject("fixtureServers");

/** A server config as the catalog would hold it (defaults applied by the real schema). */
export function serverConfig(input: Record<string, unknown>): DownstreamServerConfig {
  return downstreamServerSchema.parse(input);
}

/** A fresh tagged base on the echo fixture: its own counters, `${base}/mcp` is the endpoint. */
export function echoBase(label: string): string {
  return taggedBase(fixtures.echo, label);
}

/** A fresh tagged base on the SSE-only fixture: `${base}/sse` is the endpoint. */
export function sseBase(label: string): string {
  return taggedBase(fixtures.sseOnly, label);
}

/** A unique skill name, so KV entries of one test never serve another (storage is shared per file). */
export function uniqueSkill(label: string): string {
  return `${label}-${crypto.randomUUID().slice(0, 8)}`;
}

export function pool(servers: Record<string, DownstreamServerConfig>, overrides: Partial<DownstreamPoolOptions> = {}): DownstreamPool {
  return new DownstreamPool({ env, skill: uniqueSkill("s"), servers, ...overrides });
}

/** The text of a tool result's first text block. */
export function firstText(result: { content?: unknown }): string {
  const content = Array.isArray(result.content) ? (result.content as Array<{ type?: unknown; text?: unknown }>) : [];
  const block = content.find((item) => item.type === "text");
  return typeof block?.text === "string" ? block.text : "";
}
