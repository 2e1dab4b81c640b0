#!/usr/bin/env node
// `npm start`: local D1 migrations, `wrangler dev --local` on 127.0.0.1:8787, then the demo
// catalog loaded through the admin API. Runs under the project's Node 24 (npm puts
// node_modules/.bin first on PATH). Ctrl-C stops wrangler and its workerd processes.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { demoCatalog } from "./demo-catalog.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const wrangler = fileURLToPath(new URL("../node_modules/wrangler/bin/wrangler.js", import.meta.url));
const port = Number(process.env.PORT ?? 8787);
const remote = process.argv.includes("--remote");
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

const devArgs = [wrangler, "dev", remote ? "--remote" : "--local", "--ip", "127.0.0.1", "--port", String(port),
  "--var", "ENVIRONMENT:local", "--var", "AUTH:none"];
const dev = spawn(process.execPath, devArgs, { cwd: root, env: quiet, stdio: "inherit", detached: true });
const stop = () => { try { process.kill(-dev.pid, "SIGTERM"); } catch {} };
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
dev.on("exit", (code) => process.exit(code ?? 0));

const base = `http://127.0.0.1:${port}`;
await waitForHealth(`${base}/healthz`, 60_000);
const devVars = existsSync(`${root}/.dev.vars`) ? readFileSync(`${root}/.dev.vars`, "utf8") : "";
const catalog = demoCatalog({ env: process.env, devVars });
const put = await fetch(`${base}/admin/api/catalog`, {
  method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify(catalog.document),
});
if (!put.ok) {
  console.error(`Loading the demo catalog failed (${put.status}): ${await put.text()}`);
  stop();
} else {
  console.log(`\nSlipsnisse is running. Demo expert "ask_docs" uses ${catalog.describe}.`);
  console.log(`  MCP endpoint:  ${base}/mcp`);
  console.log(`  List tools:    npx @modelcontextprotocol/inspector --cli ${base}/mcp --transport http --method tools/list`);
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
