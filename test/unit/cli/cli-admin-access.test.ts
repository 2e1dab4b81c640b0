import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOCAL_ADMIN_TOKEN_FILE as WORKER_NAMES_FILE } from "../../../src/auth/admin-api-refusal";
import { LOCAL_ADMIN_TOKEN_FILE } from "../../../src/cli/local-admin-token.mjs";
import { listenOnLoopback, type LoopbackServer } from "../../fixtures/loopback-http";
import { runCli } from "./cli-test-io";

const TOKEN = "local-admin-token-3f9c";
const WORKER_FIX = "Send Authorization: Bearer <the Worker's ADMIN_TOKEN> (fix from the Worker).";

/** A stand-in admin API: whoami for the right token, the Worker's {error, fix} 401 otherwise. */
async function fakeWorker(seen: Array<string | undefined>, { emptyRefusal = false } = {}): Promise<LoopbackServer> {
  return listenOnLoopback(async (req, res) => {
    seen.push(req.headers.authorization);
    if (req.headers.authorization === `Bearer ${TOKEN}`) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ userId: "admin-token", login: "admin-token", role: "admin", idp: null }));
      return;
    }
    res.writeHead(401, emptyRefusal ? { "www-authenticate": 'Bearer realm="OAuth"' } : { "content-type": "application/json" });
    res.end(emptyRefusal ? "" : JSON.stringify({ error: "The admin API needs an admin: no Authorization header was sent.", fix: WORKER_FIX }));
  });
}

async function projectWithTokenFile(url: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "slipsnisse-cli-token-"));
  await mkdir(join(dir, ".wrangler"));
  await writeFile(join(dir, LOCAL_ADMIN_TOKEN_FILE), JSON.stringify({ url, token: TOKEN }), { mode: 0o600 });
  return dir;
}

describe("the CLI against a local `npm start` Worker", () => {
  const seen: Array<string | undefined> = [];
  let worker: LoopbackServer;
  beforeAll(async () => {
    worker = await fakeWorker(seen);
  });
  afterAll(async () => worker?.stop());

  it("looks for the file the Worker's 401 names", () => {
    expect(LOCAL_ADMIN_TOKEN_FILE).toBe(WORKER_NAMES_FILE);
  });

  it("reads the token npm start wrote for this loopback URL, without --token", async () => {
    const cwd = await projectWithTokenFile(worker.origin);
    const run = await runCli(["whoami", "--url", worker.origin], { cwd });
    expect(run).toMatchObject({ code: 0 });
    expect(run.stdout).toContain("userId: admin-token");
    expect(seen.at(-1)).toBe(`Bearer ${TOKEN}`);
  });

  it("prefers --token and SLIPSNISSE_ADMIN_TOKEN over the file", async () => {
    const cwd = await projectWithTokenFile(worker.origin);
    await runCli(["whoami", "--url", worker.origin, "--token", "other"], { cwd });
    expect(seen.at(-1)).toBe("Bearer other");
    await runCli(["whoami", "--url", worker.origin], { cwd, env: { SLIPSNISSE_ADMIN_TOKEN: "from-env" } });
    expect(seen.at(-1)).toBe("Bearer from-env");
  });

  it("does not send the file's token to another port", async () => {
    const cwd = await projectWithTokenFile("http://127.0.0.1:1");
    const run = await runCli(["whoami", "--url", worker.origin], { cwd });
    expect(run.code).toBe(1);
    expect(seen.at(-1)).toBeUndefined();
  });

  it("prints the Worker's own fix for a 401", async () => {
    const cwd = await mkdtemp(join(tmpdir(), "slipsnisse-cli-notoken-"));
    const run = await runCli(["push", "catalog.json", "--url", worker.origin], { cwd: await withCatalog(cwd) });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("error: The Worker wants an admin token (401): The admin API needs an admin");
    expect(run.stderr).toContain(`fix: ${WORKER_FIX}`);
    expect(run.stderr).not.toContain("not the admin API's JSON");
  });

  it("reports a 401 without a body as a refusal, not as a wrong URL", async () => {
    const bare = await fakeWorker([], { emptyRefusal: true });
    try {
      const run = await runCli(["pull", "--url", bare.origin], { cwd: await mkdtemp(join(tmpdir(), "slipsnisse-cli-bare-")) });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain("The Worker wants an admin token (401)");
      expect(run.stderr).toContain("npm start");
      expect(run.stderr).not.toContain("not the admin API's JSON");
    } finally {
      await bare.stop();
    }
  });
});

async function withCatalog(dir: string): Promise<string> {
  await writeFile(join(dir, "catalog.json"), JSON.stringify({ skills: { default: { experts: [{ name: "ask", description: "d" }] } } }));
  return dir;
}

describe("option values that begin with a dash", () => {
  const seen: Array<string | undefined> = [];
  let worker: LoopbackServer;
  const dashed = `-${TOKEN}`;
  beforeAll(async () => {
    // A Worker whose ADMIN_TOKEN begins with "-", as one base64url token in 64 does.
    worker = await listenOnLoopback(async (req, res) => {
      seen.push(req.headers.authorization);
      const ok = req.headers.authorization === `Bearer ${dashed}`;
      res.writeHead(ok ? 200 : 401, { "content-type": "application/json" });
      res.end(JSON.stringify(ok ? { userId: "admin-token", login: "admin-token", role: "admin", idp: null } : { error: "refused", fix: WORKER_FIX }));
    });
  });
  afterAll(async () => worker?.stop());

  it("takes `--token -…` as the token, in either form", async () => {
    for (const argv of [
      ["whoami", "--url", worker.origin, "--token", dashed],
      ["whoami", "--url", worker.origin, `--token=${dashed}`],
    ]) {
      const run = await runCli(argv);
      expect(run, run.stderr).toMatchObject({ code: 0, stdout: expect.stringContaining("admin-token") });
    }
    expect(seen.slice(-2)).toEqual([`Bearer ${dashed}`, `Bearer ${dashed}`]);
  });

  it("still reads an option after an option that lacks its value as an option", async () => {
    const run = await runCli(["whoami", "--url", "--token", dashed]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--url/);
  });
});
