/**
 * The "open this URL in your browser" step of a command-line MCP client, caught. Such clients
 * (mcp-remote, the Inspector CLI) open the authorization URL with the `open` package, whose
 * xdg-open hands it to `$BROWSER` when no desktop session is running. `$BROWSER` here is a
 * script that writes the URL down; the test then opens it in Chromium itself.
 */
import { chmod, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";

export interface BrowserHandoff {
  /** The value for the client's `BROWSER` environment variable. */
  readonly browser: string;
  /** Every URL handed to the browser so far, oldest first. */
  opened(): Promise<URL[]>;
  /**
   * The URL handed over at position `index` (0: the first), once it arrives. `gone` reports why
   * waiting is pointless (the client exited); it is checked between looks.
   */
  waitForOpen(index: number, gone: () => string | undefined, timeoutMs?: number): Promise<URL>;
}

/** A `$BROWSER` script in `dir` (a temp dir the caller owns and removes). */
export async function makeBrowserHandoff(dir: string): Promise<BrowserHandoff> {
  const browser = join(dir, "browser");
  const log = join(dir, "browser-opens.log");
  await writeFile(browser, `#!/bin/sh\nprintf '%s\\n' "$1" >> '${log}'\n`);
  await chmod(browser, 0o755);
  const opened = async (): Promise<URL[]> => {
    let text = "";
    try {
      text = await readFile(log, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
    return text
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => new URL(line));
  };
  return {
    browser,
    opened,
    async waitForOpen(index, gone, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const url = (await opened())[index];
        if (url) return url;
        const why = gone();
        if (why !== undefined) throw new Error(`no browser was opened: ${why}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      throw new Error(`no browser was opened within ${timeoutMs} ms`);
    },
  };
}

/**
 * Environment for a client whose browser is `handoff`: no desktop session for xdg-open to find
 * (it would open a real browser on a developer's desktop), so it falls back to `$BROWSER`.
 */
export function handoffBrowserEnv(handoff: BrowserHandoff): Record<string, string> {
  const noDesktop = [
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "XDG_CURRENT_DESKTOP",
    "XDG_SESSION_DESKTOP",
    "DESKTOP_SESSION",
    "KDE_FULL_SESSION",
    "GNOME_DESKTOP_SESSION_ID",
    "MATE_DESKTOP_SESSION_ID",
    "DBUS_SESSION_BUS_ADDRESS",
  ];
  return { ...Object.fromEntries(noDesktop.map((name) => [name, ""])), BROWSER: handoff.browser };
}
