import { readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";

const targetsSchema = z.array(z.looseObject({ webSocketDebuggerUrl: z.string().optional(), title: z.string().optional() }));
const scriptParsedSchema = z.looseObject({ scriptId: z.string(), url: z.string() });
const messageSchema = z.looseObject({
  id: z.number().optional(),
  method: z.string().optional(),
  result: z.unknown().optional(),
  error: z.unknown().optional(),
  params: z.unknown().optional(),
});

/** The `--inspector-port` wrangler dev was started with, read from its command line. */
export async function inspectorPortOf(pid: number): Promise<number> {
  const argv = (await readFile(`/proc/${pid}/cmdline`, "utf8")).split("\0");
  const port = Number(argv[argv.indexOf("--inspector-port") + 1]);
  if (!Number.isInteger(port) || port <= 0) throw new Error(`no --inspector-port in wrangler dev's command line (pid ${pid})`);
  return port;
}

/** A minimal Chrome DevTools Protocol session on the Worker's isolate (wrangler dev's inspector proxy). */
export class InspectorSession {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  private readonly listeners: Array<(method: string, params: unknown) => void> = [];

  private constructor(private readonly socket: WebSocket) {
    socket.addEventListener("message", (event) => {
      const message = messageSchema.parse(JSON.parse(String(event.data)));
      if (message.id !== undefined) {
        const waiter = this.pending.get(message.id);
        this.pending.delete(message.id);
        if (message.error !== undefined) waiter?.reject(new Error(JSON.stringify(message.error)));
        else waiter?.resolve(message.result);
      } else if (message.method) {
        for (const listener of this.listeners) listener(message.method, message.params);
      }
    });
  }

  static async open(port: number): Promise<InspectorSession> {
    const targets = targetsSchema.parse(await (await fetch(`http://127.0.0.1:${port}/json`)).json());
    const url = targets.find((target) => target.webSocketDebuggerUrl)?.webSocketDebuggerUrl;
    if (!url) throw new Error(`wrangler dev's inspector on ${port} lists no debuggable target`);
    // wrangler's inspector proxy refuses an upgrade without an allowed Origin (DevTools origins or localhost).
    const socket = new WebSocket(url, { headers: { Origin: "http://localhost" } } as unknown as string[]);
    await new Promise<void>((resolve, reject) => {
      socket.addEventListener("open", () => resolve(), { once: true });
      socket.addEventListener("error", () => reject(new Error(`inspector socket ${url} failed`)), { once: true });
    });
    return new InspectorSession(socket);
  }

  on(listener: (method: string, params: unknown) => void): void {
    this.listeners.push(listener);
  }

  send(method: string, params: Record<string, unknown> = {}): Promise<unknown> {
    const id = this.nextId++;
    const reply = new Promise<unknown>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      setTimeout(() => {
        if (this.pending.delete(id)) reject(new Error(`inspector ${method} timed out`));
      }, 60_000);
    });
    this.socket.send(JSON.stringify({ id, method, params }));
    return reply;
  }

  /**
   * The Worker's bundle as the isolate runs it (its script id and source, for attributing a
   * profile to modules): the debugger replays every parsed script when enabled, and the bundle
   * is the last `.js` among them.
   */
  async workerBundle(label: string): Promise<{ scriptId: string; source: string }> {
    const scripts: Array<{ scriptId: string; url: string }> = [];
    this.on((method, params) => {
      if (method === "Debugger.scriptParsed") scripts.push(scriptParsedSchema.parse(params));
    });
    await this.send("Debugger.enable");
    await new Promise((resolve) => setTimeout(resolve, 500));
    const bundle = scripts.filter((s) => s.url.endsWith(".js")).at(-1) ?? scripts.at(-1);
    if (!bundle) throw new Error(`the ${label} inspector reported no script`);
    const { scriptSource } = z.object({ scriptSource: z.string() }).parse(await this.send("Debugger.getScriptSource", { scriptId: bundle.scriptId }));
    await this.send("Debugger.disable");
    return { scriptId: bundle.scriptId, source: scriptSource };
  }

  close(): void {
    this.socket.close();
  }
}

/** Keeps a raw profile in the temp directory, its bundle beside it (`<path>.bundle.js`), for reading later; returns its path. */
export async function keepProfile(name: string, raw: unknown, bundleSource: string): Promise<string> {
  const path = join(tmpdir(), `slipsnisse-${name}-${Date.now()}.cpuprofile`);
  await writeFile(path, JSON.stringify(raw));
  await writeFile(`${path}.bundle.js`, bundleSource);
  return path;
}
