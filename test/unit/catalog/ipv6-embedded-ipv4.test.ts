import { describe, expect, it } from "vitest";
import { hostProblem } from "../../../src/catalog/endpoint-url-rules";
import { embeddedIpv4, parseIpv6 } from "../../../src/catalog/ip-address-ranges";

/** Two 16-bit groups of an IPv4 address, optionally XORed (Teredo obfuscates its client address). */
function groupsOf(ipv4: string, xor = 0): string {
  const [a = 0, b = 0, c = 0, d = 0] = ipv4.split(".").map(Number);
  const hex = (value: number) => (value ^ xor).toString(16);
  return `${hex((a << 8) | b)}:${hex((c << 8) | d)}`;
}

/** A public Teredo server (RFC 4380 bits 32-63), so only the client part decides. */
const TEREDO_SERVER = groupsOf("65.54.227.120");

const forms: Record<string, (ipv4: string) => string> = {
  NAT64: (ipv4) => `[64:ff9b::${ipv4}]`,
  "local-use NAT64": (ipv4) => `[64:ff9b:1::${groupsOf(ipv4)}]`,
  "6to4": (ipv4) => `[2002:${groupsOf(ipv4)}::1]`,
  "Teredo client": (ipv4) => `[2001:0:${TEREDO_SERVER}:0:0:${groupsOf(ipv4, 0xffff)}]`,
};

const embedded: Array<[string, string | null]> = [
  ["127.0.0.1", "loopback"],
  ["10.1.2.3", "private"],
  ["169.254.169.254", "link-local"],
  ["8.8.8.8", null],
];

describe("IPv6 addresses that embed an IPv4 address are judged by the IPv4 address", () => {
  for (const [form, address] of Object.entries(forms)) {
    for (const [ipv4, problem] of embedded) {
      const host = address(ipv4);
      it(`${form} ${host} (${ipv4}) is ${problem ?? "public"}`, () => {
        const groups = parseIpv6(host);
        expect(groups).not.toBeNull();
        expect(
          embeddedIpv4(groups ?? [])
            .find((entry) => entry.form === form)
            ?.octets.join("."),
        ).toBe(ipv4);
        const found = hostProblem(host);
        if (problem === null) {
          expect(found).toBeNull();
        } else {
          expect(found?.reason).toContain(problem);
          expect(found?.reason).toContain(`in a ${form} address`);
          // Only ::1 and 127.0.0.1 themselves count as loopback (allowed in local development).
          expect(found?.loopback).toBe(false);
        }
      });
    }
  }

  it("a Teredo address with a private server part is refused too", () => {
    expect(hostProblem(`[2001:0:${groupsOf("10.0.0.1")}:0:0:${groupsOf("8.8.8.8", 0xffff)}]`)?.reason).toContain("Teredo server");
  });

  it("IPv4-mapped loopback is still plain loopback, and ordinary public IPv6 passes", () => {
    expect(hostProblem("[::ffff:127.0.0.1]")).toEqual({ reason: "loopback address", loopback: true });
    expect(hostProblem("[2606:4700::1111]")).toBeNull();
    expect(hostProblem("[2001:db8::1]")?.reason).toContain("documentation");
  });
});
