#!/usr/bin/env node
// `npm start`: local D1 migrations, `wrangler dev --local` on 127.0.0.1:8787, then the demo
// catalog loaded through the admin API. Runs under the project's Node 24 (npm puts
// node_modules/.bin first on PATH). Ctrl-C stops wrangler and its workerd processes.
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { demoCatalog } from "./demo-catalog.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const wrangler = fileURLToPath(new URL("../node_modules/wrangler/bin/wrangler.js", import.meta.url));
const port = Number(process.env.PORT ?? 8787);
const remote = process.argv.includes("--remote");
// Default: OAuth with the dev identity provider (signs in DEV_USER, loopback only). --no-auth:
// no sign-in at all, for tools that cannot do OAuth (also loopback only).
const open = process.argv.includes("--no-auth");
const devUser = process.env.DEV_USER ?? "dev";
const quiet = {
  ...process.env,
  WRANGLER_SEND_METRICS: "false",
  WRANGLER_SEND_ERROR_REPORTS: "false",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
  WRANGLER_HIDE_BANNER: "true",
};

const migrate = spawnSync(process.execPath, [wrangler, "d1", "migrations", "apply", "DB", "--local"], {
  cwd: root, env: quiet, stdio: "inherit",
});
if (migrate.status !== 0) process.exit(migrate.status ?? 1);

const adminToken = randomBytes(24).toString("base64url");
// Secrets go through env files (wrangler prints them as hidden), never through --var.
const tokenDir = mkdtempSync(join(tmpdir(), "slipsnisse-"));
const tokenFile = join(tokenDir, "admin.env");
writeFileSync(tokenFile, `ADMIN_TOKEN=${adminToken}\n`, { mode: 0o600 });
process.on("exit", () => rmSync(tokenDir, { recursive: true, force: true }));
function secretFiles() {
  const files = existsSync(join(root, ".dev.vars")) ? [join(root, ".dev.vars"), tokenFile] : [tokenFile];
  return files.flatMap((file) => ["--env-file", file]);
}
// --remote (npm run start:remote): plain `wrangler dev`, which runs the AI binding through
// Cloudflare (after `wrangler login`) while D1, KV and Durable Objects stay local. `--remote`
// proper would need real D1/KV ids.
const devArgs = [wrangler, "dev", ...(remote ? [] : ["--local"]), "--ip", "127.0.0.1", "--port", String(port),
  "--var", "ENVIRONMENT:local", "--var", `AUTH:${open ? "none" : "oauth"}`, "--var", "IDP:dev",
  "--var", `DEV_USER:${devUser}`, "--var", `ADMIN_USERS:${devUser}`,
  ...(process.env.DEV_USERS ? ["--var", `DEV_USERS:${process.env.DEV_USERS}`] : []), ...secretFiles()];
const dev = spawn(process.execPath, devArgs, { cwd: root, env: quiet, stdio: "inherit", detached: true });
const stop = () => { try { process.kill(-dev.pid, "SIGTERM"); } catch {} };
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
dev.on("exit", (code) => process.exit(code ?? 0));

const base = `http://127.0.0.1:${port}`;
await waitForHealth(`${base}/healthz`, 60_000);
const devVars = existsSync(`${root}/.dev.vars`) ? readFileSync(`${root}/.dev.vars`, "utf8") : "";
const catalog = demoCatalog({ env: process.env, devVars });
// The catalog goes in through the admin API with a one-off ADMIN_TOKEN for this process.
const put = await fetch(`${base}/admin/api/catalog`, {
  method: "PUT",
  headers: { "content-type": "application/json", authorization: `Bearer ${adminToken}` },
  body: JSON.stringify(catalog.document),
});
if (!put.ok) {
  console.error(`Loading the demo catalog failed (${put.status}): ${await put.text()}`);
  stop();
} else {
  console.log(`\nSlipsnisse is running. Demo expert "ask_docs" uses ${catalog.describe}.`);
  console.log(`  MCP endpoint:  ${base}/mcp`);
  if (open) {
    console.log(`  Sign-in:       none (--no-auth, loopback only)`);
    console.log(`  List tools:    npx @modelcontextprotocol/inspector --cli ${base}/mcp --transport http --method tools/list`);
  } else {
    console.log(`  Sign-in:       OAuth with the dev identity provider as "${devUser}" (one click on the consent page)`);
    console.log(`  Without OAuth: npm start -- --no-auth`);
  }
  console.log(`  Claude Code:   claude mcp add --transport http slipsnisse ${base}/mcp\n`);
}

async function waitForHealth(url, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  console.error(`wrangler dev did not answer ${url} within ${timeoutMs / 1000} s`);
  stop();
  process.exit(1);
}
