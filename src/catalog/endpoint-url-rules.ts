import { ipv4Problem, ipv6Problem, parseIpv4, parseIpv6 } from "./ip-address-ranges";

/** Names that reach a cloud provider's instance metadata service. */
const METADATA_HOSTS = new Set(["metadata", "metadata.google.internal", "metadata.goog", "instance-data", "instance-data.ec2.internal"]);

/**
 * Why an outbound endpoint (a downstream MCP server, a model's base_url) is refused:
 * - `credentials`: user:password in the URL (secrets belong in Worker secrets)
 * - `scheme`: not http(s)
 * - `address`: a non-public host (private, link-local, metadata, ...), refused everywhere
 * - `plain-http`: http to a host that is not loopback
 * - `loopback`: allowed only in local development
 */
export type EndpointUrlProblemKind = "credentials" | "scheme" | "address" | "plain-http" | "loopback";

export interface EndpointUrlProblem {
  kind: EndpointUrlProblemKind;
  reason: string;
  /** Origin only (a URL with credentials in it must not be echoed whole); for `scheme` just the scheme. */
  shown: string;
}

function isLoopbackName(host: string): boolean {
  return host === "localhost" || host.endsWith(".localhost");
}

type HostProblem = { reason: string; loopback: boolean } | null;

/**
 * Verdicts by hostname: the guard judges every outbound fetch (two model calls and a tool call
 * per tool step), always against the same few hosts. A verdict depends on the name alone.
 */
const judgedHosts = new Map<string, HostProblem>();
const MAX_JUDGED_HOSTS = 256;

/** Why the host is not a public address, with whether it is loopback (allowed in local dev). */
export function hostProblem(host: string): HostProblem {
  let verdict = judgedHosts.get(host);
  if (verdict === undefined) {
    verdict = judgeHost(host);
    if (judgedHosts.size >= MAX_JUDGED_HOSTS) judgedHosts.clear();
    judgedHosts.set(host, verdict);
  }
  return verdict === null ? null : { ...verdict };
}

function judgeHost(host: string): HostProblem {
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
 * The rules every URL the Worker calls out to must pass, so that a catalog entry cannot turn the
 * Worker into a proxy into places it must not reach (SSRF). Only what the URL itself says is
 * judged here (IP literals in any spelling the WHATWG parser normalises); where a hostname
 * resolves to is checked at call time. A `loopback` problem is the only one local development
 * accepts; the catalog checks report the others, the runtime guard refuses all of them.
 */
export function endpointUrlProblem(url: URL): EndpointUrlProblem | null {
  const origin = `${url.protocol}//${url.host}`;
  if (url.username !== "" || url.password !== "") return { kind: "credentials", reason: "credentials in the URL", shown: origin };
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    return { kind: "scheme", reason: `${url.protocol} is not http(s)`, shown: url.protocol };
  }
  const host = hostProblem(url.hostname);
  if (host !== null && !host.loopback) return { kind: "address", reason: host.reason, shown: origin };
  if (host?.loopback) return { kind: "loopback", reason: host.reason, shown: origin };
  if (url.protocol === "http:") return { kind: "plain-http", reason: "plain http (use https)", shown: origin };
  return null;
}
