import type { FetchLike } from "@modelcontextprotocol/client";
import type { DownstreamServerConfig } from "../catalog/catalog-schema";
import { MissingServiceBindingError } from "./downstream-errors";
import { guardedFetch } from "./guarded-fetch";

/** Where a service-bound server is reached when its config gives no URL (only the path matters). */
const BINDING_DEFAULT_PATH = "/mcp";

/**
 * The URL the MCP transport talks to. For a service binding the URL only supplies the path
 * (and the Host header); the request never leaves the Cloudflare network.
 */
export function downstreamUrl(config: DownstreamServerConfig): URL {
  if (config.url !== undefined) return new URL(config.url);
  if (config.binding !== undefined) {
    return new URL(BINDING_DEFAULT_PATH, `https://${config.binding.toLowerCase().replaceAll("_", "-")}.binding`);
  }
  throw new TypeError("A downstream server needs a url or a binding (the catalog schema checks this).");
}

function isFetcher(value: unknown): value is Fetcher {
  return typeof value === "object" && value !== null && typeof Reflect.get(value, "fetch") === "function";
}

/**
 * The fetch the transports use. Plain servers get the guarded fetch (SSRF checks on every hop
 * and redirect). A service binding gets
 * `env[binding].fetch` with a Host header set: a request through a binding carries none, and
 * createMcpHandler refuses such requests ("Missing Host header", -32000).
 */
export function downstreamFetch(serverId: string, config: DownstreamServerConfig, env: Env): FetchLike {
  if (config.binding === undefined) return guardedFetch(serverId, env);
  const fetcher: unknown = Reflect.get(env, config.binding);
  if (!isFetcher(fetcher)) throw new MissingServiceBindingError(serverId, config.binding);
  const host = downstreamUrl(config).host;
  return (input, init) => {
    const request = new Request(input, init);
    const headers = new Headers(request.headers);
    if (!headers.has("host")) headers.set("host", host);
    return fetcher.fetch(new Request(request, { headers }));
  };
}
