import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { migratedD1 } from "./d1-template";
import { twoFreePorts } from "./free-port";
import { LogTail } from "./log-tail";
import { killProcessGroup } from "./process-group";
import { prebuiltWorkerFor } from "./worker-bundle";
import { offlineWranglerEnv, repoRoot, wranglerArgv } from "./wrangler-command";

export interface WranglerDevOptions {
  /**
   * Extra `--var NAME:VALUE` pairs. Defaults: ENVIRONMENT "local" and AUTH "none", which together
   * give loopback requests the unauthenticated dev user (admin role) instead of OAuth.
   */
  vars?: Record<string, string>;
  /** Path polled until the Worker answers; any HTTP status counts as ready. */
  readyPath?: string;
  readyTimeoutMs?: number;
  /** The project whose wrangler.toml is run (default: this repository). */
  projectDir?: string;
  /** Keep the persisted D1/KV/DO state directory after stop (for debugging). */
  keepState?: boolean;
  /** Apply the project's D1 migrations first (default true; a project without D1 has none). */
  migrations?: boolean;
  /** Also append everything wrangler prints to this file (for readers in other processes). */
  logFile?: string;
}

export interface WranglerDev {
  /** e.g. http://127.0.0.1:41234 (no trailing slash) */
  baseUrl: string;
  port: number;
  /** The process group id (= the spawned child's pid); every wrangler/workerd process is in it. */
  pgid: number;
  persistDir: string;
  /** Milliseconds from spawn until the Worker first answered over HTTP. */
  startupMs: number;
  logs(): string;
  stop(): Promise<void>;
  /**
   * Ends this wrangler dev as a restart does (SIGTERM to its process group: wrangler and both
   * workerd processes die) and starts it again on the same ports with the same persisted state,
   * resolved once it answers again. The returned server replaces this one (this one's `stop`
   * then does nothing). Absent on the shared server, which other files use.
   */
  restart?(): Promise<WranglerDev>;
}

async function answersHttp(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    await response.arrayBuffer();
    return true;
  } catch {
    return false;
  }
}

async function waitUntilReady(child: ChildProcess, url: string, timeoutMs: number, tail: LogTail): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`wrangler dev exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${tail.text()}`);
    }
    if (await answersHttp(url)) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`wrangler dev did not answer ${url} within ${timeoutMs} ms:\n${tail.text()}`);
}

/**
 * Starts `wrangler dev --local` on a free loopback port with a fresh persistence directory
 * (a local D1 with every migration applied: see d1-template.ts). The child is spawned detached
 * so that `stop()` can end its whole process group (wrangler plus its two workerd processes) and
 * nothing else. Files that need no special configuration use `sharedWranglerDev()` instead.
 */
export async function startWranglerDev(options: WranglerDevOptions = {}): Promise<WranglerDev> {
  const projectDir = options.projectDir ?? repoRoot;
  const persistDir = await mkdtemp(join(tmpdir(), "slipsnisse-e2e-"));
  try {
    if (options.migrations !== false) await migratedD1(projectDir, persistDir);
    const entry = await prebuiltWorkerFor(projectDir);
    // freePort's port can be taken by another process before wrangler binds it (parallel runs
    // on one machine); only that failure is worth another try, on fresh ports.
    for (let attempt = 1; ; attempt++) {
      try {
        return await launch(projectDir, persistDir, entry, options);
      } catch (error) {
        if (attempt >= PORT_ATTEMPTS || !/Address already in use|EADDRINUSE/.test(String(error))) throw error;
      }
    }
  } catch (error) {
    if (!options.keepState) await rm(persistDir, { recursive: true, force: true });
    throw error;
  }
}

const PORT_ATTEMPTS = 3;

async function launch(
  projectDir: string,
  persistDir: string,
  entry: string | undefined,
  options: WranglerDevOptions,
  ports?: [number, number],
): Promise<WranglerDev> {
  const [port, inspectorPort] = ports ?? (await twoFreePorts());
  const vars = { ENVIRONMENT: "local", AUTH: "none", ...options.vars };
  const args = [
    "dev",
    // The test run's prebuilt bundle (worker-bundle.ts) instead of bundling at every start. Given
    // an entry outside the project, wrangler looks for its configuration beside the entry: name
    // the project's (its directory is also where .dev.vars is read).
    ...(entry === undefined ? [] : [entry, "--no-bundle", "--config", join(projectDir, "wrangler.toml")]),
    "--local",
    "--ip",
    "127.0.0.1",
    "--port",
    String(port),
    "--inspector-port",
    String(inspectorPort),
    "--persist-to",
    persistDir,
    "--show-interactive-dev-session=false",
    "--live-reload=false",
    ...Object.entries(vars).flatMap(([name, value]) => ["--var", `${name}:${value}`]),
  ];
  const started = performance.now();
  const child = spawn(process.execPath, wranglerArgv(args), {
    cwd: projectDir,
    env: offlineWranglerEnv(),
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const pgid = child.pid;
  if (pgid === undefined) throw new Error("wrangler dev could not be spawned (no pid)");
  const tail = new LogTail();
  const log = options.logFile === undefined ? undefined : createWriteStream(options.logFile, { flags: "a" });
  const onOutput = (chunk: Buffer) => {
    tail.push(chunk);
    log?.write(chunk);
  };
  child.stdout?.on("data", onOutput);
  child.stderr?.on("data", onOutput);
  child.once("exit", () => log?.end());

  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await killProcessGroup(pgid);
    if (!options.keepState) await rm(persistDir, { recursive: true, force: true });
  };
  const baseUrl = `http://127.0.0.1:${port}`;
  try {
    await waitUntilReady(child, `${baseUrl}${options.readyPath ?? "/healthz"}`, options.readyTimeoutMs ?? 30_000, tail);
    // Another process may have answered on the port while this wrangler failed to bind it.
    if (child.exitCode !== null || child.signalCode !== null || /Address already in use/.test(tail.text())) {
      throw new Error(`wrangler dev could not bind its ports:\n${tail.text()}`);
    }
  } catch (error) {
    await killProcessGroup(pgid);
    throw error;
  }
  const startupMs = performance.now() - started;
  const restart = async (): Promise<WranglerDev> => {
    stopped = true;
    await killProcessGroup(pgid);
    return launch(projectDir, persistDir, entry, options, [port, inspectorPort]);
  };
  return { baseUrl, port, pgid, persistDir, startupMs, logs: () => tail.text(), stop, restart };
}
