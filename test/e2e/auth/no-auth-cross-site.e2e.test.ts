import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCliProcess } from "../cli/cli-process";
import { loadCatalog } from "../harness/catalog-admin";
import { chromiumSkipReason, sharedChromium } from "../harness/chromium-browser";
import { connectMcpClient } from "../harness/mcp-clients";
import { startWranglerDev, type WranglerDev } from "../harness/wrangler-dev";

const expert = (description: string) => ({
  name: "ask",
  description,
  provider: "openai-compatible" as const,
  base_url: "http://127.0.0.1:9/v1",
  model: "unused",
});
const catalog = (description: string) => ({ skills: { default: { description: "General questions.", experts: [expert(description)] } } });
const planted = { skills: { default: { description: "Planted.", experts: [expert("Planted by a web page.")] } } };

interface Versions {
  versions: Array<{ version: number; author: string; current: boolean }>;
}
interface Runs {
  runs: Array<{ id: string }>;
}

/**
 * What a hostile page on another loopback origin runs against `npm start -- --no-auth`: the
 * simple requests a browser sends anywhere without a preflight (`mode: "no-cors"`, text/plain
 * bodies), and a DELETE, which needs one. It reports when every fetch has settled.
 */
function hostilePage(target: string, runId: string): string {
  const script = `
const target = ${JSON.stringify(target)};
const planted = ${JSON.stringify(JSON.stringify(planted))};
const attempts = [
  ["catalog", target + "/admin/api/catalog", { method: "PUT", mode: "no-cors", body: planted }],
  ["expert", target + "/admin/api/skills/default/experts", { method: "POST", mode: "no-cors", body: ${JSON.stringify(JSON.stringify({ ...expert("Planted by a web page."), name: "planted" }))} }],
  ["push-post", target + "/admin/api/validate", { method: "POST", mode: "no-cors", body: planted }],
  ["restore", target + "/admin/api/skills/default/versions/1/restore", { method: "POST", mode: "no-cors", body: "{}" }],
  ["restore-empty", target + "/admin/api/skills/default/versions/1/restore", { method: "POST", mode: "no-cors" }],
  ["skill", target + "/admin/api/skills/default", { method: "POST", mode: "no-cors", body: planted }],
  ["me-delete", target + "/me/api/skills/default/runs/${runId}", { method: "DELETE" }],
  ["me-delete-post", target + "/me/api/skills/default/runs/${runId}", { method: "POST", mode: "no-cors", body: "{}" }],
];
Promise.all(attempts.map(([name, url, init]) => fetch(url, init).then((r) => name + ": " + r.type, (e) => name + ": " + e))).then((lines) => {
  document.getElementById("out").textContent = lines.join("\\n");
  document.title = "settled";
});`;
  return `<!doctype html><title>cat pictures</title><pre id="out"></pre><script>${script}</script>`;
}

describe("--no-auth: a page on another origin cannot write through the admin API or /me/api", () => {
  let dev: WranglerDev;
  let browser: Browser | undefined;
  let evil: Server;
  let evilOrigin: string;
  let runId: string;
  let page = "";

  const api = async <T>(path: string): Promise<T> => {
    const response = await fetch(`${dev.baseUrl}${path}`);
    expect(response.status, path).toBe(200);
    return (await response.json()) as T;
  };

  beforeAll(async () => {
    dev = await startWranglerDev();
    await loadCatalog(dev.baseUrl, catalog("Answers questions."));
    await loadCatalog(dev.baseUrl, catalog("Answers questions briefly."));
    // A run to delete: the model is unreachable, so it ends in error, but it is recorded.
    const client = await connectMcpClient("v2-2025", `${dev.baseUrl}/mcp`);
    try {
      await client.callTool("ask", { query: "hello" });
    } finally {
      await client.close();
    }
    const runs = await api<Runs>("/me/api/skills/default/runs");
    runId = runs.runs[0]?.id ?? "";
    expect(runId).not.toBe("");
    evil = createServer((_request, response) => {
      response.writeHead(200, { "content-type": "text/html" }).end(page);
    });
    await new Promise<void>((resolve) => evil.listen(0, "127.0.0.1", resolve));
    evilOrigin = `http://127.0.0.1:${(evil.address() as AddressInfo).port}`;
    page = hostilePage(dev.baseUrl, runId);
    if (!chromiumSkipReason) browser = await sharedChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => evil?.close(resolve));
    await dev?.stop();
  });

  it.skipIf(chromiumSkipReason !== undefined)("Chromium runs the page's no-cors writes; no version is added and nothing is deleted", async () => {
    const before = await api<Versions>("/admin/api/skills/default/versions");
    expect(before.versions).toHaveLength(2);
    const context = await (browser as Browser).newContext();
    try {
      const tab = await context.newPage();
      await tab.goto(`${evilOrigin}/cats`);
      await tab.waitForFunction('document.title === "settled"', undefined, { timeout: 20_000 });
      const report = await tab.locator("#out").textContent();
      // The no-cors POSTs reach the server and "succeed" opaquely whatever it answered (a browser
      // refuses PUT in no-cors mode); the DELETE needs a preflight, which is refused.
      expect(report).toContain("expert: opaque");
      expect(report).toContain("restore: opaque");
      expect(report).toContain("me-delete: TypeError");
    } finally {
      await context.close();
    }
    const after = await api<Versions>("/admin/api/skills/default/versions");
    expect(after.versions).toEqual(before.versions);
    expect((await api<Runs>("/me/api/skills/default/runs")).runs.map((run) => run.id)).toContain(runId);
    expect(dev.logs()).not.toContain("Planted");
  });

  it("the CLI, which sends no Origin, still pushes and restores", async () => {
    const dir = await mkdtemp(join(tmpdir(), "slipsnisse-xsite-cli-"));
    try {
      await writeFile(join(dir, "catalog.json"), JSON.stringify(catalog("Answers questions from the CLI.")));
      const cli = (...args: string[]) => runCliProcess(args, { cwd: dir, env: { SLIPSNISSE_URL: dev.baseUrl } });
      const push = await cli("push", "catalog.json");
      expect(push.code, push.stderr).toBe(0);
      const rollback = await cli("rollback", "1", "--skill", "default");
      expect(rollback.code, rollback.stderr).toBe(0);
      const versions = await api<Versions>("/admin/api/skills/default/versions");
      expect(versions.versions).toHaveLength(4);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
