import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { DownstreamPool } from "../../src/downstream/downstream-pool";
import { assertSafeDownstreamUrl } from "../../src/downstream/url-guard";
import { serverConfig } from "./downstream-test-helpers";

const production: Env = Object.assign({}, env, { ENVIRONMENT: "production" });
const local: Env = Object.assign({}, env, { ENVIRONMENT: "local" });

/** [url, allowed in production, allowed in local development] */
const table: Array<[string, boolean, boolean]> = [
  ["https://mcp.example.com/mcp", true, true],
  ["https://93.184.216.34/mcp", true, true],
  ["https://[2606:4700::1111]/mcp", true, true],
  ["http://mcp.example.com/mcp", false, false],
  ["ftp://mcp.example.com/mcp", false, false],
  ["https://user:pass@mcp.example.com/mcp", false, false],
  ["https://token@mcp.example.com/mcp", false, false],
  // loopback in every spelling: allowed only locally
  ["http://127.0.0.1:8787/mcp", false, true],
  ["https://127.0.0.1/mcp", false, true],
  ["http://localhost:8787/mcp", false, true],
  ["http://LOCALHOST./mcp", false, true],
  ["http://api.localhost/mcp", false, true],
  ["http://127.1.2.3/mcp", false, true],
  ["http://2130706433/mcp", false, true],
  ["http://0177.0.0.1/mcp", false, true],
  ["http://0x7f.0.0.1/mcp", false, true],
  ["http://[::1]/mcp", false, true],
  ["http://[::ffff:127.0.0.1]/mcp", false, true],
  // private, link-local, metadata: never
  ["https://10.0.0.5/mcp", false, false],
  ["https://172.16.3.4/mcp", false, false],
  ["https://192.168.1.10/mcp", false, false],
  ["https://100.64.0.1/mcp", false, false],
  ["https://0.0.0.0/mcp", false, false],
  ["https://169.254.169.254/latest/meta-data", false, false],
  ["https://2852039166/latest", false, false],
  ["https://0251.0376.0251.0376/latest", false, false],
  ["https://[::ffff:169.254.169.254]/latest", false, false],
  ["https://[::ffff:a9fe:a9fe]/latest", false, false],
  ["https://[64:ff9b::10.0.0.1]/mcp", false, false],
  ["https://[fd00::1]/mcp", false, false],
  ["https://[fe80::1]/mcp", false, false],
  ["https://[::]/mcp", false, false],
  ["https://metadata.google.internal/computeMetadata/v1", false, false],
  ["https://224.0.0.1/mcp", false, false],
  ["not a url", false, false],
];

describe("assertSafeDownstreamUrl", () => {
  for (const [url, inProduction, inLocal] of table) {
    it(`${url}: production ${inProduction ? "allows" : "refuses"}, local ${inLocal ? "allows" : "refuses"}`, () => {
      const check = (target: Env) => () => assertSafeDownstreamUrl("srv", url, target);
      if (inProduction) expect(check(production)).not.toThrow();
      else expect(check(production)).toThrow(expect.objectContaining({ kind: "unsafe-downstream-url", serverId: "srv" }));
      if (inLocal) expect(check(local)).not.toThrow();
      else expect(check(local)).toThrow(expect.objectContaining({ kind: "unsafe-downstream-url" }));
    });
  }

  it("never echoes URL credentials in the error", () => {
    let message = "";
    try {
      assertSafeDownstreamUrl("srv", "https://admin:hunter2@mcp.example.com/mcp", production);
    } catch (error) {
      message = `${(error as Error).message} ${(error as { fix: string }).fix}`;
    }
    expect(message).toContain("credentials in the URL");
    expect(message).not.toContain("hunter2");
  });

  it("the pool refuses a loopback server outside local development before any request", async () => {
    const open = new DownstreamPool({
      env: production,
      skill: "guarded",
      servers: { local: serverConfig({ url: "http://127.0.0.1:9/mcp" }) },
    });
    await expect(open.listTools("local")).rejects.toMatchObject({ kind: "downstream-unavailable", serverId: "local" });
    const error = await open.callTool("local", "echo", {}).catch((caught: unknown) => caught);
    expect((error as { fix: string }).fix).toContain("https://");
    await open.close();
  });
});
