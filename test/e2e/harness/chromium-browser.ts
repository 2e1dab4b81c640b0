/**
 * A real browser for the pages people click through: Debian's Chromium, driven by
 * playwright-core (which cannot download a browser of its own here). A page that works only for
 * `fetch` is not proven: Chromium enforces what a fetch ignores (CSP, cookie rules, redirects).
 */
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { repoRoot } from "./wrangler-command";

const CANDIDATES = [process.env.CHROMIUM_PATH, "/usr/bin/chromium", "/usr/bin/chromium-browser"];

/** The Chromium executable, or undefined when none is installed. */
export const chromiumPath: string | undefined = CANDIDATES.find((path): path is string => path !== undefined && path !== "" && existsSync(path));

/**
 * Why browser tests are skipped, for the test title; undefined when they run. CI installs
 * Chromium (.ci/run), so there a missing browser fails instead of skipping silently.
 */
export const chromiumSkipReason: string | undefined = chromiumPath
  ? undefined
  : "skipped: no Chromium found (set CHROMIUM_PATH, or `apt-get install chromium`)";

if (chromiumSkipReason) {
  if (process.env.CI) throw new Error(`CI must run the browser tests, but ${chromiumSkipReason}`);
  console.warn(`Browser tests ${chromiumSkipReason}`);
}

/**
 * Headless Chromium without the background services that would try to reach the internet
 * (this machine has none, and every attempt costs time and log noise).
 */
export function launchChromium(): Promise<Browser> {
  if (!chromiumPath) throw new Error(`Browser tests ${chromiumSkipReason}`);
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    timeout: 30_000,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
}

let running: Promise<Browser> | undefined;

/**
 * A Chromium for one test file, as `launchChromium()` gives but not a process of its own: the
 * files of a vitest worker (e2e runs with isolate: false) share one, started at the first call: a launch was about 1.2 s of CPU on a machine
 * whose cores the e2e files saturate. What a file sees stays its own: each makes its own
 * contexts (fresh profiles: cookies, storage, cache), and its `close()` closes those and leaves
 * the process to the next file. Playwright ends the process when the worker exits.
 */
export async function sharedChromium(): Promise<Browser> {
  const current = await running?.catch(() => undefined);
  if (current === undefined || !current.isConnected()) running = launchChromium();
  const shared = await (running as Promise<Browser>).catch((error: unknown) => {
    running = undefined;
    throw error;
  });
  const contexts = new Set<BrowserContext>();
  const ownContext = async (options: Parameters<Browser["newContext"]>[0]) => {
    const context = await shared.newContext(options);
    contexts.add(context);
    context.once("close", () => contexts.delete(context));
    return context;
  };
  return new Proxy(shared, {
    get(target, property) {
      if (property === "close") {
        return async () => {
          await Promise.all([...contexts].map((context) => context.close()));
          contexts.clear();
        };
      }
      if (property === "newContext") {
        return ownContext;
      }
      if (property === "newPage") {
        // As Browser.newPage: a page in a fresh context of its own, closed with the page.
        return async (options: Parameters<Browser["newPage"]>[0]) => {
          const context = await ownContext(options);
          const page = await context.newPage();
          page.once("close", () => void context.close());
          return page;
        };
      }
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/**
 * A fresh browser profile whose requests never leave the machine: every request to a host that
 * is not loopback (a client's https callback such as claude.ai's) goes to a proxy on a closed
 * loopback port and fails there. A proxy rather than `context.route`: with request interception
 * on, Chromium aborts a redirect to a non-http scheme (a native app's `cursor://…`) before the
 * 3xx is reported, so the redirect watch below would never see it.
 */
export async function loopbackOnlyContext(browser: Browser, options: { timezoneId?: string; locale?: string } = {}): Promise<BrowserContext> {
  // Nothing listens on port 9 (discard) on a test machine; Chromium answers ERR_PROXY_CONNECTION_FAILED at once.
  return browser.newContext({ ...options, proxy: { server: "http://127.0.0.1:9", bypass: "127.0.0.1,localhost,[::1]" } });
}

export interface ClientRedirectWatch {
  /** Resolves with the first redirect (a 3xx Location) or navigation that `matches`. */
  readonly redirect: Promise<URL>;
  stop(): void;
}

/**
 * Watches a page for the moment the authorization server sends the browser to the client. The
 * 3xx Location is read from the response, so any scheme counts (https, a loopback listener, or a
 * native app's `cursor://…`, which the browser itself cannot open).
 */
export function watchClientRedirect(page: Page, matches: (url: URL) => boolean, timeoutMs = 20_000): ClientRedirectWatch {
  let stop = () => {};
  const redirect = new Promise<URL>((resolve, reject) => {
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`the browser was not sent to the client within ${timeoutMs} ms (page: ${page.url()})`));
    }, timeoutMs);
    const seen = (url: URL) => {
      if (!matches(url)) return;
      stop();
      resolve(url);
    };
    const onResponse = (response: import("playwright-core").Response) => {
      const location = response.status() >= 300 && response.status() < 400 ? response.headers().location : undefined;
      if (location) seen(new URL(location, response.url()));
    };
    const onRequest = (request: import("playwright-core").Request) => seen(new URL(request.url()));
    page.on("response", onResponse);
    page.on("request", onRequest);
    stop = () => {
      clearTimeout(timer);
      page.off("response", onResponse);
      page.off("request", onRequest);
    };
  });
  return { redirect, stop };
}

/** Where browser tests leave screenshots for a person to look at (git-ignored). */
export const artifactsDir = join(repoRoot, "test", "e2e", ".artifacts");

/** A full-page screenshot of `page` as `<name>.png` in {@link artifactsDir}; returns its path. */
export async function saveScreenshot(page: Page, name: string): Promise<string> {
  await mkdir(artifactsDir, { recursive: true });
  const path = join(artifactsDir, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
