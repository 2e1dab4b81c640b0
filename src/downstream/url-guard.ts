import { isLocalDevelopment } from "../env";
import { UnsafeDownstreamUrlError } from "./downstream-errors";
import { ipv4Problem, ipv6Problem, parseIpv4, parseIpv6 } from "./ip-address-ranges";

/** Names that reach a cloud provider's instance metadata service. */
const METADATA_HOSTS = new Set(["metadata", "metadata.google.internal", "metadata.goog", "instance-data", "instance-data.ec2.internal"]);

function isLoopbackName(host: string): boolean {
  return host === "localhost" || host.endsWith(".localhost");
}

/** Why the host is not a public address, with whether it is loopback (allowed in local dev). */
export function hostProblem(host: string): { reason: string; loopback: boolean } | null {
  const name = host.toLowerCase().replace(/\.$/, "");
  if (isLoopbackName(name)) return { reason: "loopback host", loopback: true };
  if (METADATA_HOSTS.has(name)) return { reason: "cloud metadata host", loopback: false };
  const v4 = parseIpv4(name);
  const v6 = v4 ? null : parseIpv6(name);
  const problem = v4 ? ipv4Problem(v4) : v6 ? ipv6Problem(v6) : null;
  if (problem === null) return null;
  return { reason: `${problem} address`, loopback: problem === "loopback" };
}

/**
 * Refuse downstream URLs that would turn the Worker into a proxy into places it must not reach
 * (SSRF): every scheme but https, credentials in the URL, loopback, private, link-local and
 * metadata addresses in any spelling. Loopback (over http too) is allowed only in local
 * development. What a hostname resolves to is checked by guarded-fetch.ts, which also
 * re-checks every redirect.
 */
export function assertSafeDownstreamUrl(serverId: string, rawUrl: string, env: Env): URL {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw new UnsafeDownstreamUrlError(serverId, "(unparseable)", "not a valid URL");
  }
  const origin = `${url.protocol}//${url.host}`;
  if (url.username !== "" || url.password !== "") {
    throw new UnsafeDownstreamUrlError(serverId, origin, "credentials in the URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new UnsafeDownstreamUrlError(serverId, origin, `${url.protocol} is not an MCP transport`);
  }
  const problem = hostProblem(url.hostname);
  const local = isLocalDevelopment(env);
  if (problem !== null && !(problem.loopback && local)) throw new UnsafeDownstreamUrlError(serverId, origin, problem.reason);
  if (url.protocol === "http:" && !(problem?.loopback && local)) {
    throw new UnsafeDownstreamUrlError(serverId, origin, "plain http (use https)");
  }
  return url;
}
