import { createServer } from "node:http";

export interface LoopbackCallback {
  /** `http://127.0.0.1:<port><path>`, to register as the client's redirect URI. */
  readonly redirectUri: string;
  /** The first request that reached `path` (code, state, iss or error), as the browser sent it. */
  readonly received: Promise<URL>;
  close(): Promise<void>;
}

/**
 * The listener a native client opens for its sign-in (RFC 8252 §7.3; Claude Code and the MCP
 * Inspector do this): a real HTTP server on 127.0.0.1 and a free port that the browser is
 * redirected to. It answers with the page such clients show, and remembers what arrived.
 */
export async function startLoopbackCallback(path = "/callback", timeoutMs = 30_000): Promise<LoopbackCallback> {
  let resolve: (url: URL) => void = () => {};
  let reject: (error: Error) => void = () => {};
  const received = new Promise<URL>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // A caller that never awaits `received` (the test failed earlier) must not see an unhandled rejection.
  received.catch(() => {});
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", `http://${request.headers.host ?? "127.0.0.1"}`);
    if (url.pathname !== path) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { "Content-Type": "text/html; charset=utf-8" }).end("<!doctype html><title>Signed in</title><p>You can close this window.</p>");
    resolve(url);
  });
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the loopback callback listener has no TCP port");
  const { port } = address;
  const timer = setTimeout(() => reject(new Error(`nothing reached the loopback callback on port ${port} within ${timeoutMs} ms`)), timeoutMs);
  return {
    redirectUri: `http://127.0.0.1:${port}${path}`,
    received,
    close: () =>
      new Promise<void>((closed) => {
        clearTimeout(timer);
        server.closeAllConnections();
        server.close(() => closed());
      }),
  };
}
