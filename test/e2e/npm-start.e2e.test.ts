import { execFileSync, spawn } from "node:child_process";
import { open, readFile, stat, writeFile } from "node:fs/promises";
import { connect } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listenOnLoopback } from "../fixtures/loopback-http";
import { runCliProcess } from "./cli/cli-process";
import { startFakeOpenAI, textReply, toolCallsReply, toolResultMessages, type FakeOpenAIServer } from "./harness/fake-openai-server";
import { connectMcpClient, resultText } from "./harness/mcp-clients";
import { startNpmStart, type NpmStart } from "./harness/npm-start-process";
import { freePort } from "./harness/free-port";
import { childrenMatching, isLiveProcess, listProcessGroup } from "./harness/process-group";
import { snapshotProject, type ProjectSnapshot } from "./harness/project-snapshot";
import { waitFor } from "../support/wait-for";

/** `npx slipsnisse …` as the banner prints it, run as a real process in the project. */
function bannerCliLine(output: string): { args: string[]; url: string } {
  const line = /Admin CLI: +npx slipsnisse (.+)\n/.exec(output)?.[1];
  if (line === undefined) throw new Error(`the banner has no Admin CLI line:\n${output}`);
  const args = line.trim().split(/\s+/);
  const url = args[args.indexOf("--url") + 1];
  if (url === undefined) throw new Error(`the Admin CLI line names no --url: ${line}`);
  return { args, url };
}

async function versionsOfDefault(url: string, token: string): Promise<Array<{ author: string; note: string | null; current: boolean }>> {
  const response = await fetch(`${url}/admin/api/skills/default/versions`, { headers: { authorization: `Bearer ${token}` } });
  expect(response.status).toBe(200);
  return ((await response.json()) as { versions: Array<{ author: string; note: string | null; current: boolean }> }).versions;
}

/** Whether nothing accepts a TCP connection on 127.0.0.1:port any more. */
function refusesConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", () => resolve(true));
  });
}

/** The lines npm start printed before its banner. */
function linesBeforeBanner(output: string): string[] {
  return output.slice(0, output.indexOf("Slipsnisse is running.")).trimEnd().split("\n");
}

const TENANT_IDS = ["--db-id", "0f1e2d3c-4b5a-4697-8899-aabbccddeeff", "--cache-kv-id", "c".repeat(32), "--oauth-kv-id", "d".repeat(32)];

async function tokenFileOf(dir: string): Promise<{ url: string; token: string; mode: number }> {
  const file = join(dir, ".wrangler", "slipsnisse-admin.json");
  const { url, token } = JSON.parse(await readFile(file, "utf8")) as { url: string; token: string };
  return { url, token, mode: (await stat(file)).mode & 0o777 };
}

/**
 * The README's first command, as a user runs it: `npm start` (here with `--no-auth`, since this
 * client does no OAuth) on a machine running a local OpenAI-compatible server, which npm start
 * finds by itself; then the demo expert answers a question by searching the built-in docs server.
 */
describe("npm start --no-auth", () => {
  let fake: FakeOpenAIServer;
  let project: ProjectSnapshot;
  let start: NpmStart;
  let modelPort: string;

  beforeAll(async () => {
    fake = await startFakeOpenAI({
      // Listed as Ollama lists them: an embedding model first, a tool-calling family last.
      models: ["nomic-embed-text:latest", "gemma2:2b", "qwen2.5:7b-instruct"],
      script: [
        toolCallsReply({ name: "docs__search_docs", arguments: { query: "budget exhausted" } }),
        textReply("Every loop is bounded; running out returns what was gathered."),
      ],
    });
    project = await snapshotProject();
    modelPort = new URL(fake.baseURL).port;
    // A port nothing listens on comes first: the probe must get past it.
    start = await startNpmStart(project.dir, ["--no-auth"], { SLIPSNISSE_DEMO_PROBE_PORTS: `${await freePort()},${modelPort}` });
  });

  afterAll(async () => {
    await start?.stop();
    await fake?.close();
    await project?.remove();
  });

  it("finds the local model server, says so, and its first ask_docs call gets the model's answer", async () => {
    const output = start.output();
    expect(output).toContain(`MCP endpoint:  http://127.0.0.1:${start.port}/mcp`);
    expect(output).toContain(`Dashboard:     http://127.0.0.1:${start.port}/admin`);
    expect(output).toContain('Catalog:       loaded the demo: expert "ask_docs" uses openai-compatible / qwen2.5:7b-instruct');
    expect(output).toContain(`Model:         qwen2.5:7b-instruct on a server at 127.0.0.1:${modelPort}, found by npm start`);
    const client = await connectMcpClient("v2-2025", `http://127.0.0.1:${start.port}/mcp`);
    try {
      const tools = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(["ask_docs"]);
      // Before any run: npm start's health probe listed the demo's docs server, whose two tools are
      // read-only, so the expert is not labelled destructive and offers no `approve`.
      expect(tools[0]?.annotations?.readOnlyHint).toBe(true);
      expect(tools[0]?.annotations?.destructiveHint).not.toBe(true);
      expect(Object.keys((tools[0]?.inputSchema.properties ?? {}) as Record<string, unknown>).sort()).toEqual(["query", "thread"]);
      const result = await client.callTool("ask_docs", { query: "What happens when a budget runs out?" });
      expect(resultText(result)).toContain("Every loop is bounded");
      expect(fake.requests.map((request) => request.model)).toEqual(["qwen2.5:7b-instruct", "qwen2.5:7b-instruct"]);
      // The model read a real search result from the built-in docs server (this project's docs).
      const toolResults = fake.requests.flatMap((request) => toolResultMessages(request));
      expect(toolResults.map((message) => message.content).join("\n")).toMatch(/\(path: [a-z]+#/);
    } finally {
      await client.close();
    }
  });

  it("prints a line per step before the banner and keeps the migrations' output in the log the banner names", async () => {
    const before = linesBeforeBanner(start.output());
    expect(before).toEqual([
      expect.stringMatching(/^Database ready \(local D1; migrations applied, listed in \.wrangler\/slipsnisse-start\.log\)\.$/),
      `Starting wrangler dev on http://127.0.0.1:${start.port} …`,
    ]);
    expect(start.output()).toContain("Log:           .wrangler/slipsnisse-start.log");
    const logFile = join(project.dir, ".wrangler", "slipsnisse-start.log");
    expect((await stat(logFile)).mode & 0o777).toBe(0o600);
    const log = await readFile(logFile, "utf8");
    for (const migration of ["0001_catalog.sql", "0005_run_index_stops.sql"]) expect(log).toContain(migration);
    expect(log).toContain(`Ready on http://127.0.0.1:${start.port}`);
    // wrangler lists the run's secrets as "(hidden)": the admin token of this run is not in the log.
    expect(log).not.toContain((await tokenFileOf(project.dir)).token);
  });

  it("authors the demo version as the admin token, as an OAuth start does", async () => {
    const { token } = await tokenFileOf(project.dir);
    expect(await versionsOfDefault(`http://127.0.0.1:${start.port}`, token)).toMatchObject([{ author: "admin-token", current: true }]);
  });

  it("keeps serving while `tenant add` previews (writing nothing) and then writes wrangler.toml", async () => {
    const config = join(project.dir, "wrangler.toml");
    const original = await readFile(config);
    const preview = await runCliProcess(["tenant", "add", "acme", "--dry-run", ...TENANT_IDS], { cwd: project.dir });
    expect(preview).toMatchObject({ code: 0, stdout: expect.stringContaining("[env.acme]") });
    expect(await readFile(config)).toEqual(original);

    // A reader that opened the config before the write (as wrangler's watcher reads it) sees it whole.
    const before = await open(config);
    const reloads = start.output().split("updated and ready").length;
    try {
      const added = await runCliProcess(["tenant", "add", "acme", ...TENANT_IDS], { cwd: project.dir });
      expect(added.code, added.stderr).toBe(0);
      expect(added.stdout).toContain("npx wrangler deploy --env acme");
      // expect((await before.readFile()).equals(original)).toBe(true);
    } finally {
      await before.close();
    }
    expect((await readFile(config, "utf8")).startsWith(original.toString().trimEnd())).toBe(true);
    await waitFor(
      "wrangler dev to reload the new wrangler.toml",
      () => {
        // A config read half-written ends wrangler dev ("Missing entry-point to Worker script"), and npm start with it.
        if (start.child.exitCode !== null) throw new Error(`npm start exited after the write:\n${start.output().slice(-1500)}`);
        return start.output().split("updated and ready").length > reloads ? true : undefined;
      },
      60_000,
      200,
    );
    expect(isLiveProcess(start.child.pid ?? 0)).toBe(true);
    expect((await fetch(`http://127.0.0.1:${start.port}/healthz`)).status).toBe(200);
  });

  it("stops wrangler and its workerd processes on Ctrl-C", async () => {
    const pid = start.child.pid;
    if (pid === undefined) throw new Error("npm start has no pid");
    const exited = new Promise<number | null>((resolve) => start.child.once("exit", resolve));
    process.kill(pid, "SIGINT");
    await exited;
    // wrangler runs in a process group of its own; the start script must have ended it.
    await waitFor(
      "npm start's wrangler processes to be gone",
      () => (listProcessGroup(pid).length + countWranglerOn(start.port) === 0 ? true : undefined),
      10_000,
      200,
    );
  });
});

/**
 * The local admin path under the default (OAuth) `npm start`: the CLI line the banner prints
 * works on the first try, and a restart keeps the user's own catalog.
 */
describe("npm start (OAuth) and the admin CLI", () => {
  let project: ProjectSnapshot;
  let start: NpmStart | undefined;
  const own = {
    skills: {
      default: {
        description: "Mine.",
        experts: [{ name: "my_expert", description: "My own expert.", provider: "openai-compatible", base_url: "http://127.0.0.1:9/v1", model: "unused" }],
      },
    },
  };

  beforeAll(async () => {
    project = await snapshotProject();
    await writeFile(join(project.dir, "catalog.json"), JSON.stringify(own, null, 2));
  });
  afterAll(async () => {
    await start?.stop();
    await project?.remove();
  });

  let killedPort: number | undefined;

  it("loads the demo into the empty catalog, and on a restart updates only that demo to the new model choice", async () => {
    const emptyPort = await freePort();
    start = await startNpmStart(project.dir, [], { SLIPSNISSE_DEMO_PROBE_PORTS: String(emptyPort) });
    const output = start.output();
    expect(output).toContain('Catalog:       loaded the demo: expert "ask_docs" uses workers-ai');
    // No model server answered: the banner says so before anyone calls the expert, with the three ways out.
    expect(output).toContain('Model:         NONE. The demo expert "ask_docs" has no model that runs here, so its calls will fail:');
    expect(output).toContain(`no local model server answered (a server on ${emptyPort})`);
    for (const way of [
      "1. a local OpenAI-compatible server",
      "2. Gemini: GOOGLE_GENERATIVE_AI_API_KEY=... in .dev.vars",
      "3. Workers AI: npx wrangler login, then npm run start:remote",
    ])
      expect(output).toContain(way);
    await start.stop();
    start = await startNpmStart(project.dir, [], { SLIPSNISSE_DEMO_BASE_URL: "http://127.0.0.1:9/v1", SLIPSNISSE_DEMO_MODEL: "other" });
    expect(start.output()).toContain('Catalog:       the demo, updated: expert "ask_docs" uses openai-compatible / other');
    expect(start.output()).not.toContain("Model:");
    // The second start finds every migration applied and skips wrangler's check.
    expect(linesBeforeBanner(start.output())[0]).toBe("Database ready (local D1; no migration pending).");
  });

  it("takes wrangler and workerd down with it when npm start is killed with SIGKILL, freeing the port", async () => {
    if (!start) throw new Error("the previous test left no npm start");
    const pid = start.child.pid ?? 0;
    const [wranglerGroup] = childrenMatching(pid, "wrangler.js dev");
    if (wranglerGroup === undefined) throw new Error("npm start has no wrangler dev child");
    expect(listProcessGroup(wranglerGroup).map((member) => member.command)).toEqual(expect.arrayContaining(["workerd"]));
    const exited = new Promise((resolve) => start?.child.once("exit", resolve));
    process.kill(pid, "SIGKILL");
    await exited;
    killedPort = start.port;
    const port = killedPort;
    await waitFor(
      "wrangler's group to end and the port to refuse connections",
      async () => (listProcessGroup(wranglerGroup).length === 0 && listProcessGroup(pid).length === 0 && (await refusesConnections(port)) ? true : undefined),
      15_000,
      200,
    );
    start = undefined;
  });

  it("prints a CLI line that pushes a catalog on the first try, with the token npm start wrote", async () => {
    // On the port the killed npm start held: nothing of it is left to refuse this one.
    start = await startNpmStart(
      project.dir,
      [],
      {
        DEV_USERS: "alice,bob",
        SLIPSNISSE_DEMO_BASE_URL: "http://127.0.0.1:9/v1",
        SLIPSNISSE_DEMO_MODEL: "other",
      },
      killedPort,
    );
    const output = start.output();
    expect(output).toContain('Catalog:       the demo, unchanged: expert "ask_docs" uses openai-compatible / other');
    expect(output).toContain("Sign-in:       OAuth with the dev identity provider; the consent page offers dev, alice, bob (admin: dev)");
    expect(output).toContain(`Admin CLI:     npx slipsnisse push catalog.json --url http://127.0.0.1:${start.port}\n`);
    const file = await tokenFileOf(project.dir);
    expect(file).toMatchObject({ url: `http://127.0.0.1:${start.port}`, mode: 0o600 });
    expect(output).not.toContain(file.token);
    // Sign-in is on: without a token the admin API answers {error, fix}.
    const refused = await fetch(`http://127.0.0.1:${start.port}/admin/api/catalog`);
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ error: expect.any(String), fix: expect.stringContaining("slipsnisse-admin.json") });

    const { args } = bannerCliLine(output);
    const pushed = await runCliProcess(args, { cwd: project.dir, env: { SLIPSNISSE_URL: "", SLIPSNISSE_ADMIN_TOKEN: "" } });
    expect(pushed).toMatchObject({ code: 0, stdout: expect.stringContaining("skill default: saved as version 3") });
    const versions = await versionsOfDefault(`http://127.0.0.1:${start.port}`, file.token);
    // Every version was made with an admin token: the two demos and the user's push.
    const demo = { author: "admin-token", note: "demo catalog loaded by npm start" };
    expect(versions).toMatchObject([{ author: "admin-token", note: null, current: true }, demo, demo]);
  });

  it("keeps the user's catalog across a restart and honours an ADMIN_TOKEN from .dev.vars", async () => {
    await start?.stop();
    const own = "my-own-admin-token-5b1e";
    await writeFile(join(project.dir, ".dev.vars"), `ENVIRONMENT=local\nADMIN_TOKEN=${own}\n`);
    start = await startNpmStart(project.dir);
    expect(start.output()).toContain("Catalog:       kept the existing catalog (skills: default); the demo was not loaded");
    expect(start.output()).toContain("ADMIN_TOKEN from .dev.vars");
    const whoami = await fetch(`http://127.0.0.1:${start.port}/admin/api/whoami`, { headers: { authorization: `Bearer ${own}` } });
    expect(await whoami.json()).toEqual({ userId: "admin-token", login: "admin-token", role: "admin", idp: null });
    expect((await tokenFileOf(project.dir)).token).toBe(own);

    const { url } = bannerCliLine(start.output());
    const pulled = await runCliProcess(["pull", "--url", url], { cwd: project.dir, env: { SLIPSNISSE_URL: "", SLIPSNISSE_ADMIN_TOKEN: "" } });
    expect(pulled.code).toBe(0);
    const live = JSON.parse(pulled.stdout) as { skills: Record<string, { experts: Array<{ name: string }> }> };
    expect(live.skills.default?.experts.map((expert) => expert.name)).toEqual(["my_expert"]);
    expect(await versionsOfDefault(url, own)).toHaveLength(3);
  });
});

describe("npm start on a port already in use", () => {
  it("says so and exits, and the server already there is sent nothing (no demo, no admin token)", async () => {
    const project = await snapshotProject();
    const seen: string[] = [];
    const squatter = await listenOnLoopback(async (req, res) => {
      seen.push(`${req.method} ${req.url} ${req.headers.authorization ?? ""}`);
      res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
    });
    try {
      const port = Number(new URL(squatter.origin).port);
      const child = spawn(process.execPath, ["scripts/start.mjs"], {
        cwd: project.dir,
        env: { ...process.env, PORT: String(port) },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let output = "";
      const collect = (chunk: Buffer) => {
        output += chunk.toString();
      };
      child.stdout.on("data", collect);
      child.stderr.on("data", collect);
      const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
      expect(code).toBe(1);
      expect(output).toContain(`Port ${port} on 127.0.0.1 is in use: stop what listens there, or start on another port with PORT=<port> npm start.`);
      expect(seen).toEqual([]);
    } finally {
      await squatter.stop();
      await project.remove();
    }
  });
});

function countWranglerOn(port: number): number {
  const out = execFileSync("ps", ["-eo", "args"], { encoding: "utf8" });
  return out.split("\n").filter((line) => line.includes(`--port ${port}`) || line.includes(`127.0.0.1:${port}`)).length;
}
