#!/usr/bin/env node
// `npm start`: local D1 migrations, `wrangler dev --local` on 127.0.0.1:8787, then the demo
// catalog loaded through the admin API when the catalog is empty. Runs under the project's
// Node 24 (npm puts node_modules/.bin first on PATH). Ctrl-C stops wrangler and its workerd
// processes; a watchdog stops them when npm start dies any other way. Before the banner only a
// line per step is printed: wrangler's output goes to .wrangler/slipsnisse-start.log, and
// after the banner to the terminal as well.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { appendFileSync, chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { LOCAL_ADMIN_TOKEN_FILE } from "../src/cli/local-admin-token.mjs";
import { DEMO_NOTE, demoCatalog, demoModelConfigured } from "./demo-catalog.mjs";
import { findLocalModelServer, probeTargets } from "./local-model-probe.mjs";
import { applyMigrations, migrationsUpToDate } from "./local-migrations.mjs";
import { banner, demoModelLines } from "./start-banner.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const wrangler = fileURLToPath(new URL("../node_modules/wrangler/bin/wrangler.js", import.meta.url));
const port = Number(process.env.PORT ?? 8787);
const remote = process.argv.includes("--remote");
// Default: OAuth with the dev identity provider (signs in DEV_USER, loopback only). --no-auth:
// no sign-in at all, for tools that cannot do OAuth (also loopback only).
const open = process.argv.includes("--no-auth");
const devUser = process.env.DEV_USER ?? "dev";
const devUsers = (process.env.DEV_USERS ?? "")
  .split(",")
  .map((login) => login.trim())
  .filter(Boolean);
const quiet = {
  ...process.env,
  WRANGLER_SEND_METRICS: "false",
  WRANGLER_SEND_ERROR_REPORTS: "false",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
  WRANGLER_HIDE_BANNER: "true",
  // wrangler dev's local trace collector (on by default) stores every invocation's events in a
  // SQLite object inside the same workerd: about half of a call's CPU, and absent in production
  // (docs/platform-notes.md#wrangler-dev-trace-collector). Slipsnisse records its own runs;
  // X_LOCAL_OBSERVABILITY=true npm start turns the collector back on.
  X_LOCAL_OBSERVABILITY: process.env.X_LOCAL_OBSERVABILITY ?? "false",
};

const base = `http://127.0.0.1:${port}`;
// The demo catalog and the admin token go to whatever answers on the port once it is healthy:
// another server already listening there must not get them. Checked first (a taken port needs
// no migrations) and again just before wrangler starts.
await assertPortFree(port);
const devVarsFile = join(root, ".dev.vars");
const devVars = existsSync(devVarsFile) ? readFileSync(devVarsFile, "utf8") : "";

const LOG_FILE = ".wrangler/slipsnisse-start.log";
const logPath = join(root, LOG_FILE);
mkdirSync(dirname(logPath), { recursive: true });
// What wrangler prints (request lines with their paths) stays the user's, as the terminal was.
writeFileSync(logPath, `npm start ${process.argv.slice(2).join(" ")} at ${new Date().toISOString()}\n`, { mode: 0o600 });
chmodSync(logPath, 0o600);
const log = (text) => appendFileSync(logPath, text);

// A local model server for the demo expert, looked for while the migrations run (bounded, in
// parallel), unless the user named a model or Gemini; --remote runs Workers AI for real.
const probed = remote || demoModelConfigured({ env: process.env, devVars }) ? [] : probeTargets(process.env, port);
const probe = probed.length > 0 ? findLocalModelServer(probed, process.env.SLIPSNISSE_DEMO_MODEL) : Promise.resolve({ empty: [] });

if (migrationsUpToDate(root)) {
  console.log("Database ready (local D1; no migration pending).");
} else {
  const migrated = await applyMigrations({ root, wrangler, env: quiet, log });
  if (migrated.code !== 0) {
    console.error(`${migrated.output.trimEnd().split("\n").slice(-30).join("\n")}\n\nThe local D1 migrations failed (the whole output is in ${LOG_FILE}).`);
    process.exit(migrated.code ?? 1);
  }
  console.log(`Database ready (local D1; migrations applied, listed in ${LOG_FILE}).`);
}
// An ADMIN_TOKEN the user put in .dev.vars is the Worker's token; otherwise one for this run.
const ownToken = dotenvValue(devVars, "ADMIN_TOKEN");
const adminToken = ownToken ?? randomBytes(24).toString("base64url");
// The CLI reads this file for a loopback --url, so the local admin path needs no --token.
// .wrangler/ is git-ignored; the file is the user's alone.
const tokenFile = join(root, LOCAL_ADMIN_TOKEN_FILE);
mkdirSync(dirname(tokenFile), { recursive: true });
writeFileSync(tokenFile, `${JSON.stringify({ url: base, token: adminToken })}\n`, { mode: 0o600 });
chmodSync(tokenFile, 0o600);

// Connection tokens are sealed with CONNECTIONS_KEY: one from .dev.vars, else one kept in
// .wrangler/ (git-ignored) so connections made in one run still open in the next.
const ownConnectionsKey = dotenvValue(devVars, "CONNECTIONS_KEY");
const connectionsKeyFile = join(root, ".wrangler", "connections-key");
if (!ownConnectionsKey && !existsSync(connectionsKeyFile)) writeFileSync(connectionsKeyFile, `${randomBytes(32).toString("base64url")}\n`, { mode: 0o600 });
const connectionsKey = ownConnectionsKey ?? readFileSync(connectionsKeyFile, "utf8").trim();

// Secrets go through env files (wrangler prints them as hidden), never through --var; a later
// file wins, so the generated token is passed only when .dev.vars has none.
function secretFiles() {
  const files = devVars ? [devVarsFile] : [];
  const generated = [...(ownToken ? [] : [`ADMIN_TOKEN=${adminToken}`]), ...(ownConnectionsKey ? [] : [`CONNECTIONS_KEY=${connectionsKey}`])];
  if (generated.length > 0) {
    const dir = mkdtempSync(join(tmpdir(), "slipsnisse-"));
    const file = join(dir, "admin.env");
    writeFileSync(file, `${generated.join("\n")}\n`, { mode: 0o600 });
    process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
    files.push(file);
  }
  return files.flatMap((file) => ["--env-file", file]);
}
// --remote (npm run start:remote): plain `wrangler dev`, which runs the AI binding through
// Cloudflare (after `wrangler login`) while D1, KV and Durable Objects stay local. `--remote`
// proper would need real D1/KV ids.
const devArgs = [
  wrangler,
  "dev",
  ...(remote ? [] : ["--local"]),
  "--ip",
  "127.0.0.1",
  "--port",
  String(port),
  "--var",
  "ENVIRONMENT:local",
  "--var",
  `AUTH:${open ? "none" : "oauth"}`,
  "--var",
  "IDP:dev",
  "--var",
  `DEV_USER:${devUser}`,
  "--var",
  `ADMIN_USERS:${devUser}`,
  ...(devUsers.length > 0 ? ["--var", `DEV_USERS:${devUsers.join(",")}`] : []),
  ...secretFiles(),
];
await assertPortFree(port);
console.log(`Starting wrangler dev on ${base} …`);
const dev = spawn(process.execPath, devArgs, { cwd: root, env: quiet, stdio: ["ignore", "pipe", "pipe"], detached: true });
// Until the banner, wrangler's output (bindings table, request lines of the health checks)
// goes only to the log; from then on to the terminal as well.
let echo = false;
for (const [from, to] of [
  [dev.stdout, process.stdout],
  [dev.stderr, process.stderr],
]) {
  from.on("data", (chunk) => {
    log(chunk.toString());
    if (echo) to.write(chunk);
  });
}
// Its stdin is a pipe from this process that nobody writes to: it ends when this process ends,
// however it ends, and the watchdog then ends wrangler's group (scripts/start-watchdog.mjs).
spawn(process.execPath, [fileURLToPath(new URL("./start-watchdog.mjs", import.meta.url)), String(dev.pid)], {
  stdio: ["pipe", "ignore", "ignore"],
}).unref();
let stopping = false;
const stop = () => {
  stopping = true;
  try {
    process.kill(-dev.pid, "SIGTERM");
  } catch {}
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
process.on("SIGHUP", stop);
dev.on("exit", (code) => {
  if (!echo && !stopping) console.error(`wrangler dev exited (${code ?? "killed"}) before the server was ready; its output is in ${LOG_FILE}:\n${logTail()}`);
  process.exit(code ?? 0);
});

await waitForHealth(`${base}/healthz`, 60_000);
const { found, empty } = await probe;
const catalog = demoCatalog({ env: process.env, devVars, found });
let loaded;
try {
  loaded = await loadDemoUnlessOwnCatalog(catalog);
  // The health probe lists the demo's docs server through the pin check a run's listing passes,
  // so the first tools/list already knows its tools are read-only (no "destructive" label, no
  // `approve` argument) instead of waiting for a first run to list them.
  if (loaded.demo) await adminApi("GET", "/skills/default/health?timeout_ms=5000").catch(() => undefined);
} catch (error) {
  console.error(`Loading the demo catalog failed: ${error instanceof Error ? error.message : String(error)}`);
  stop();
}
if (loaded !== undefined) {
  const model = loaded.demo ? demoModelLines({ provider: catalog.provider, remote, found, empty, probed }) : [];
  log(`npm start: ready${found ? ` (found ${found.name} on port ${found.port}: ${found.model})` : ""}\n`);
  process.stdout.write(banner({ base, catalog: loaded.text, model, open, devUser, devUsers, ownToken: Boolean(ownToken), logFile: LOG_FILE }));
  echo = true;
}

/**
 * The demo goes only into an empty catalog, or replaces the demo an earlier `npm start` loaded
 * (so a new model choice applies); a catalog of the user's own is never touched.
 * @returns {Promise<{ text: string, demo: boolean }>} what the banner says about the catalog; whether it is the demo
 */
async function loadDemoUnlessOwnCatalog({ document, describe }) {
  const live = await adminApi("GET", "/catalog");
  const skills = Object.keys(live.skills ?? {});
  if (skills.length > 0) {
    const history = skills.length === 1 && skills[0] === "default" ? await adminApi("GET", "/skills/default/versions") : { versions: [] };
    const current = (history.versions ?? []).find((version) => version.current);
    if (current?.note !== DEMO_NOTE) return { text: `kept the existing catalog (skills: ${skills.join(", ")}); the demo was not loaded`, demo: false };
  }
  const put = await adminApi("PUT", `/catalog?note=${encodeURIComponent(DEMO_NOTE)}`, document);
  const changed = (put.skills ?? []).some((skill) => skill.changed);
  const what = skills.length === 0 ? "loaded the demo" : changed ? "the demo, updated" : "the demo, unchanged";
  return { text: `${what}: expert "ask_docs" uses ${describe}`, demo: true };
}

/** The end of the log, for a start that failed before the banner. */
function logTail() {
  return readFileSync(logPath, "utf8").trimEnd().split("\n").slice(-30).join("\n");
}

async function adminApi(method, path, body) {
  const response = await fetch(`${base}/admin/api${path}`, {
    method,
    headers: { "content-type": "application/json", authorization: `Bearer ${adminToken}` },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} /admin/api${path} answered ${response.status}: ${text}`);
  return JSON.parse(text);
}

/** A KEY=value line of a .dev.vars file, quotes removed; undefined when absent or empty. */
function dotenvValue(text, key) {
  const line = text.split(/\r?\n/).find((candidate) => new RegExp(`^\\s*${key}\\s*=`).test(candidate));
  const value = line
    ?.slice(line.indexOf("=") + 1)
    .trim()
    .replace(/^(["'])(.*)\1$/, "$2");
  return value ? value : undefined;
}

async function waitForHealth(url, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  console.error(`wrangler dev did not answer ${url} within ${timeoutMs / 1000} s; its output is in ${LOG_FILE}:\n${logTail()}`);
  stop();
  process.exit(1);
}

/** Exits with a clear message when something already listens on 127.0.0.1:port. */
async function assertPortFree(port) {
  await new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", (error) => {
      const why = error.code === "EADDRINUSE" ? "is in use" : `cannot be used (${error.message})`;
      console.error(`Port ${port} on 127.0.0.1 ${why}: stop what listens there, or start on another port with PORT=<port> npm start.`);
      process.exit(1);
    });
    probe.listen(port, "127.0.0.1", () => probe.close(resolve));
  });
}
