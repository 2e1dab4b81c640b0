/**
 * mcp-remote, the stdio bridge that desktop MCP clients (Claude Desktop, Windsurf, older Cursor)
 * use to reach a remote server with OAuth, driven as those clients drive it: spawned as a child
 * process and spoken to over stdio by the MCP SDK v1 `Client`. mcp-remote runs its own sign-in
 * (dynamic registration, PKCE, a loopback callback server, the token exchange); the URL it
 * opens in a browser is caught by a browser handoff for the test to open in Chromium.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { type BrowserHandoff, handoffBrowserEnv, makeBrowserHandoff } from "./browser-handoff";
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
  /** Where mcp-remote's "open this in your browser" lands. */
  browser: BrowserHandoff;
  remove(): Promise<void>;
}

export async function makeMcpRemoteHome(): Promise<McpRemoteHome> {
  const dir = await mkdtemp(join(tmpdir(), "slipsnisse-mcp-remote-"));
  await mkdir(join(dir, "config"));
  return { dir, callbackPort: await freePort(), browser: await makeBrowserHandoff(dir), remove: () => rm(dir, { recursive: true, force: true }) };
}

const storedTokensSchema = z.looseObject({ access_token: z.string(), refresh_token: z.string().optional() });

/** mcp-remote's token file for the one server this home has signed in to (`<config>/mcp-remote-v1/<hash>_tokens.json`). */
async function tokensFile(home: McpRemoteHome): Promise<string> {
  const storeDir = join(home.dir, "config", "mcp-remote-v1");
  const files = (await readdir(storeDir)).filter((name) => name.endsWith("_tokens.json"));
  if (files.length !== 1 || !files[0]) throw new Error(`expected one token file in ${storeDir}, found: ${files.join(", ") || "none"}`);
  return join(storeDir, files[0]);
}

/** The tokens mcp-remote stored for this home's server. */
export async function storedTokens(home: McpRemoteHome): Promise<z.infer<typeof storedTokensSchema>> {
  return storedTokensSchema.parse(JSON.parse(await readFile(await tokensFile(home), "utf8")));
}

/**
 * Replaces the stored access token with one the server never issued (its expiry left as it
 * was), so the next launch is answered 401 and must refresh, as after the server revoked it.
 */
export async function spoilStoredAccessToken(home: McpRemoteHome): Promise<void> {
  const file = await tokensFile(home);
  const tokens = storedTokensSchema.parse(JSON.parse(await readFile(file, "utf8")));
  await writeFile(file, JSON.stringify({ ...tokens, access_token: `${tokens.access_token}-revoked` }));
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
  const openedBefore = (await home.browser.opened()).length;
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [proxyScript, serverUrl, String(home.callbackPort), "--auth-timeout", "60", ...(options.args ?? [])],
    env: { HOME: home.dir, MCP_REMOTE_CONFIG_DIR: join(home.dir, "config"), ...handoffBrowserEnv(home.browser) },
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
      try {
        return await home.browser.waitForOpen(openedBefore, () => (exited ? "mcp-remote exited" : undefined), timeoutMs);
      } catch (error) {
        throw new Error(`${String(error)}\nmcp-remote stderr:\n${stderr.slice(-3000)}`);
      }
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
