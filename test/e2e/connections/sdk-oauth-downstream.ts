import { spawn } from "node:child_process";
import { join } from "node:path";
import { twoFreePorts } from "../harness/free-port";
import { LogTail } from "../harness/log-tail";
import { killProcessGroup } from "../harness/process-group";
import { repoRoot } from "../harness/wrangler-command";

export interface SdkOAuthDownstream {
  /** http://localhost:<port>/mcp — the resource its tokens are issued for. */
  mcpUrl: string;
  authOrigin: string;
  /** Everything it printed; it logs each authenticated request with the token it got. */
  logs(): string;
  /** The distinct access tokens it accepted, in order of first use. */
  acceptedTokens(): string[];
  stop(): Promise<void>;
}

/**
 * The MCP TypeScript SDK's own example server with its demo OAuth provider (`--oauth`): a
 * protected-resource metadata document (RFC 9728), an authorization server on a second port with
 * RFC 8414 metadata, dynamic client registration, PKCE and token introspection. No one here
 * wrote it. Its /authorize approves at once (a demo "user" cookie) and redirects back with a code.
 */
export async function startSdkOAuthDownstream(): Promise<SdkOAuthDownstream> {
  // A port free a moment ago can be taken by another e2e file's process before the server binds it.
  for (let attempt = 1; ; attempt++) {
    const [port, authPort] = await twoFreePorts();
    try {
      return await startOnPorts(port, authPort);
    } catch (error) {
      if (attempt >= PORT_ATTEMPTS || !String(error).includes("EADDRINUSE")) throw error;
    }
  }
}

const PORT_ATTEMPTS = 3;

async function startOnPorts(port: number, authPort: number): Promise<SdkOAuthDownstream> {
  const script = join(repoRoot, "node_modules/@modelcontextprotocol/sdk/dist/esm/examples/server/simpleStreamableHttp.js");
  const child = spawn(process.execPath, [script, "--oauth"], {
    cwd: repoRoot,
    env: { ...process.env, MCP_PORT: String(port), MCP_AUTH_PORT: String(authPort) },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const pgid = child.pid;
  if (pgid === undefined) throw new Error("the SDK example server could not be spawned");
  const tail = new LogTail(5_000);
  child.stdout?.on("data", (chunk: Buffer) => tail.push(chunk));
  child.stderr?.on("data", (chunk: Buffer) => tail.push(chunk));
  const mcpUrl = `http://localhost:${port}/mcp`;
  const stop = () => killProcessGroup(pgid);
  const deadline = Date.now() + 20_000;
  for (;;) {
    const ready = await fetch(`http://localhost:${port}/.well-known/oauth-protected-resource/mcp`, { signal: AbortSignal.timeout(1_000) })
      .then((response) => response.ok)
      .catch(() => false);
    const authReady = await fetch(`http://localhost:${authPort}/.well-known/oauth-authorization-server`, { signal: AbortSignal.timeout(1_000) })
      .then((response) => response.ok)
      .catch(() => false);
    if (ready && authReady) break;
    if (Date.now() > deadline || child.exitCode !== null) {
      await stop();
      throw new Error(`the SDK example server did not start:\n${tail.text()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    mcpUrl,
    authOrigin: `http://localhost:${authPort}`,
    logs: () => tail.text(),
    acceptedTokens: () => [...new Set([...tail.text().matchAll(/token: '([0-9a-f-]{36})'/g)].map((match) => match[1] ?? ""))],
    stop,
  };
}
