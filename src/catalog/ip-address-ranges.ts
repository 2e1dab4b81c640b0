/**
 * IP literal classification for the outbound endpoint rules (endpoint-url-rules.ts), used by the
 * catalog checks and the runtime fetch guard alike. Hostnames reach here already
 * normalised by the WHATWG URL parser, which turns decimal (2130706433), octal (0177.0.0.1)
 * and hex (0x7f.1) IPv4 forms into dotted quads; parsing is strict anyway.
 */

/** Dotted-quad IPv4 to its four octets, or null. */
export function parseIpv4(host: string): [number, number, number, number] | null {
  const parts = host.split(".");
  if (parts.length !== 4) return null;
  const octets = parts.map((part) => (/^(0|[1-9][0-9]{0,2})$/.test(part) ? Number(part) : Number.NaN));
  if (octets.some((octet) => !(octet >= 0 && octet <= 255))) return null;
  return octets as [number, number, number, number];
}

/** `[v6]` or bare v6 to eight 16-bit groups, or null. Accepts a trailing dotted IPv4. */
export function parseIpv6(host: string): number[] | null {
  let text = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  if (!text.includes(":")) return null;
  text = text.split("%")[0] ?? "";
  const lastColon = text.lastIndexOf(":");
  const v4 = parseIpv4(text.slice(lastColon + 1));
  if (v4) {
    const hex = (high: number, low: number) => ((high << 8) | low).toString(16);
    text = `${text.slice(0, lastColon + 1)}${hex(v4[0], v4[1])}:${hex(v4[2], v4[3])}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const group = (part: string) => (part === "" ? [] : part.split(":"));
  const head = group(halves[0] ?? "");
  const rest = halves.length === 2 ? group(halves[1] ?? "") : [];
  const explicit = head.length + rest.length;
  if (halves.length === 1 ? explicit !== 8 : explicit > 7) return null;
  const zeros = halves.length === 2 ? new Array<string>(8 - explicit).fill("0") : [];
  const groups = [...head, ...zeros, ...rest].map((part) => (/^[0-9a-f]{1,4}$/i.test(part) ? parseInt(part, 16) : Number.NaN));
  if (groups.some(Number.isNaN)) return null;
  return groups;
}

const IPV4_BLOCKED: ReadonlyArray<[number, number, number, number, number, string]> = [
  [0, 0, 0, 0, 8, "this-network"],
  [10, 0, 0, 0, 8, "private"],
  [100, 64, 0, 0, 10, "carrier-grade NAT"],
  [127, 0, 0, 0, 8, "loopback"],
  [169, 254, 0, 0, 16, "link-local (cloud metadata lives here)"],
  [172, 16, 0, 0, 12, "private"],
  [192, 0, 0, 0, 24, "IETF protocol assignments"],
  [192, 0, 2, 0, 24, "documentation"],
  [192, 168, 0, 0, 16, "private"],
  [198, 18, 0, 0, 15, "benchmarking"],
  [198, 51, 100, 0, 24, "documentation"],
  [203, 0, 113, 0, 24, "documentation"],
  [224, 0, 0, 0, 4, "multicast"],
  [240, 0, 0, 0, 4, "reserved"],
];

/** Why an IPv4 address is not a public unicast address, or null if it is one. */
export function ipv4Problem(octets: readonly number[]): string | null {
  const value = octets.reduce((sum, octet) => sum * 256 + octet, 0);
  for (const [a, b, c, d, bits, label] of IPV4_BLOCKED) {
    const base = ((a * 256 + b) * 256 + c) * 256 + d;
    const size = 2 ** (32 - bits);
    if (value >= base && value < base + size) return label;
  }
  return null;
}

const octetsOf = (high: number, low: number): number[] => [high >> 8, high & 0xff, low >> 8, low & 0xff];

/**
 * The IPv4 addresses an IPv6 address carries, with the form's name: a packet to such an
 * address ends up at that IPv4 host (through a translator or a tunnel relay), so it must pass
 * the IPv4 rules too. IPv4-mapped `::ffff:0:0/96` and IPv4-compatible `::/96` (RFC 4291), NAT64
 * `64:ff9b::/96` (RFC 6052) and the local-use `64:ff9b:1::/48` (RFC 8215; checked at the /96
 * position, the last 32 bits, which is how such prefixes are deployed), 6to4 `2002::/16` (RFC
 * 3056: bits 16-47), Teredo `2001::/32` (RFC 4380: the server in bits 32-63 and the client in
 * the last 32 bits, XOR 0xffffffff).
 */
export function embeddedIpv4(groups: readonly number[]): Array<{ form: string; octets: number[] }> {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = groups;
  const upperZero = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  if (upperZero && g5 === 0xffff) return [{ form: "IPv4-mapped", octets: octetsOf(g6, g7) }];
  if (upperZero && g5 === 0) return [{ form: "IPv4-compatible", octets: octetsOf(g6, g7) }];
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return [{ form: "NAT64", octets: octetsOf(g6, g7) }];
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 1) return [{ form: "local-use NAT64", octets: octetsOf(g6, g7) }];
  if (g0 === 0x2002) return [{ form: "6to4", octets: octetsOf(g1, g2) }];
  if (g0 === 0x2001 && g1 === 0) {
    return [
      { form: "Teredo server", octets: octetsOf(g2, g3) },
      { form: "Teredo client", octets: octetsOf(g6 ^ 0xffff, g7 ^ 0xffff) },
    ];
  }
  return [];
}

/** Why an IPv6 address is not a public unicast address, or null if it is one. */
export function ipv6Problem(groups: readonly number[]): string | null {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = groups;
  const upperZero = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  if (upperZero && g5 === 0 && g6 === 0 && (g7 === 0 || g7 === 1)) return g7 === 1 ? "loopback" : "unspecified";
  for (const { form, octets } of embeddedIpv4(groups)) {
    const problem = ipv4Problem(octets);
    // Mapped and compatible forms are that IPv4 host itself (::ffff:127.0.0.1 is loopback, allowed in local
    // development); through a translator or tunnel an embedded address is never a local one, so it is named.
    if (problem !== null) return form === "IPv4-mapped" || form === "IPv4-compatible" ? problem : `${problem} (in a ${form} address)`;
  }
  if ((g0 & 0xfe00) === 0xfc00) return "unique local (private)";
  if ((g0 & 0xffc0) === 0xfe80) return "link-local";
  if ((g0 & 0xffc0) === 0xfec0) return "site-local";
  if ((g0 & 0xff00) === 0xff00) return "multicast";
  if (g0 === 0x2001 && g1 === 0x0db8) return "documentation";
  return null;
}
