/**
 * mcp-remote, the stdio bridge that desktop MCP clients (Claude Desktop, Windsurf, older Cursor)
 * use to reach a remote server with OAuth, driven as those clients drive it: spawned as a child
 * process and spoken to over stdio by the MCP SDK v1 `Client`. mcp-remote runs its own sign-in
 * (dynamic registration, PKCE, a loopback callback server, the token exchange) and opens the
 * authorization URL with the `open` package, whose xdg-open hands it to `$BROWSER` when no
 * desktop is running: here a script that writes the URL down for the test to open in Chromium.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "./free-port";
import { isLiveProcess } from "./process-group";

const proxyScript = fileURLToPath(new URL("../../../node_modules/mcp-remote/dist/proxy.js", import.meta.url));

/**
 * A desktop user's home for mcp-remote: its client registration and tokens (MCP_REMOTE_CONFIG_DIR)
 * and the log of URLs it asked the browser to open. Bridges started with the same home share the
 * sign-in, as two launches of a desktop client do.
 */
export interface McpRemoteHome {
  dir: string;
  /** The loopback port mcp-remote's OAuth callback listens on (fixed, so the registered redirect stays valid). */
  callbackPort: number;
  remove(): Promise<void>;
}

export async function makeMcpRemoteHome(): Promise<McpRemoteHome> {
  const dir = await mkdtemp(join(tmpdir(), "slipsnisse-mcp-remote-"));
  await mkdir(join(dir, "config"));
  const browser = join(dir, "browser");
  // xdg-open runs `$BROWSER <url>`; the URL is written down, never opened here.
  await writeFile(browser, `#!/bin/sh\nprintf '%s\\n' "$1" >> '${join(dir, "browser-opens.log")}'\n`);
  await chmod(browser, 0o755);
  return { dir, callbackPort: await freePort(), remove: () => rm(dir, { recursive: true, force: true }) };
}

/** Every URL mcp-remote has handed to the browser from this home, oldest first. */
export async function browserOpens(home: McpRemoteHome): Promise<URL[]> {
  let text = "";
  try {
    text = await readFile(join(home.dir, "browser-opens.log"), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => new URL(line));
}

export interface McpRemoteBridge {
  /** The SDK v1 client on the bridge's stdio; usable once `connected` resolves. */
  readonly client: Client;
  readonly pid: number;
  /** The MCP handshake through the bridge; mcp-remote answers it only after its own sign-in. */
  readonly connected: Promise<void>;
  /** The next URL this bridge hands to the browser (rejects if the bridge exits first). */
  waitForBrowserOpen(timeoutMs?: number): Promise<URL>;
  /** What mcp-remote wrote to stderr, for failure messages. */
  stderr(): string;
  /** Closes the client, which ends the bridge; throws if the bridge's process outlives it. */
  close(): Promise<void>;
}

export interface McpRemoteOptions {
  /** Extra mcp-remote flags, e.g. `["--transport", "sse-only"]`. */
  args?: readonly string[];
}

/**
 * Spawns `mcp-remote <serverUrl> <callbackPort>` under this Node and starts the MCP handshake.
 * Without a stored token mcp-remote signs in first: watch for the URL with `waitForBrowserOpen`.
 */
export async function startMcpRemote(home: McpRemoteHome, serverUrl: string, options: McpRemoteOptions = {}): Promise<McpRemoteBridge> {
  const openedBefore = (await browserOpens(home)).length;
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [proxyScript, serverUrl, String(home.callbackPort), "--auth-timeout", "60", ...(options.args ?? [])],
    // Only these: no DISPLAY or desktop session, so xdg-open falls back to $BROWSER.
    env: { HOME: home.dir, MCP_REMOTE_CONFIG_DIR: join(home.dir, "config"), BROWSER: join(home.dir, "browser") },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  let exited = false;
  const client = new Client({ name: "slipsnisse-e2e-mcp-remote", version: "0.0.0" });
  client.onclose = () => (exited = true);
  const connected = client.connect(transport, { timeout: 90_000 });
  // connect() spawns synchronously before its first await, so the pid is known now.
  const pid = transport.pid;
  if (pid === null) {
    await connected.catch(() => {});
    throw new Error(`mcp-remote did not start:\n${stderr}`);
  }
  connected.catch(() => {});

  return {
    client,
    pid,
    connected,
    async waitForBrowserOpen(timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const opened = await browserOpens(home);
        const next = opened[openedBefore];
        if (next) return next;
        if (exited) throw new Error(`mcp-remote exited before it opened a browser:\n${stderr.slice(-3000)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      throw new Error(`mcp-remote opened no browser within ${timeoutMs} ms:\n${stderr.slice(-3000)}`);
    },
    stderr: () => stderr,
    async close() {
      // The SDK's close ends stdin, then SIGTERM, then SIGKILL, each after 2 s.
      await client.close();
      if (isLiveProcess(pid)) {
        process.kill(pid, "SIGKILL");
        throw new Error(`mcp-remote (pid ${pid}) outlived its client's close`);
      }
    },
  };
}
