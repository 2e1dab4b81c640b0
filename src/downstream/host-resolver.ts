import { z } from "zod";

/** Addresses a hostname resolves to (A and AAAA). */
export type HostResolver = (hostname: string) => Promise<string[]>;

const dnsJson = z.object({ Status: z.number(), Answer: z.array(z.object({ type: z.number(), data: z.string() })).optional() });
const A = 1;
const AAAA = 28;

/**
 * Workers have no DNS API, so names are resolved over DNS-over-HTTPS (JSON flavour). Only the
 * connect-time check uses it; the platform's fetch resolves the name again on its own.
 */
export const resolveOverHttps: HostResolver = async (hostname) => {
  const answers = await Promise.all(
    ["A", "AAAA"].map(async (type) => {
      const response = await fetch(`https://cloudflare-dns.com/dns-query?name=${encodeURIComponent(hostname)}&type=${type}`, {
        headers: { accept: "application/dns-json" },
        signal: AbortSignal.timeout(3_000),
      });
      if (!response.ok) throw new Error(`DNS-over-HTTPS answered HTTP ${response.status}`);
      const parsed = dnsJson.parse(await response.json());
      return (parsed.Answer ?? []).filter((record) => record.type === A || record.type === AAAA).map((record) => record.data);
    }),
  );
  return answers.flat();
};
