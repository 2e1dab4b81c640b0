import { build } from "esbuild";
import type { Page } from "playwright-core";
import { repoRoot } from "./wrangler-command";

/*
 * A host for MCP Apps in a Chromium page, as a chat client embeds one: the app's HTML in a
 * sandboxed iframe (opaque origin, scripts only) under the CSP the host builds from the
 * resource's `_meta.ui.csp`, and the host side of the protocol from @modelcontextprotocol/ext-apps
 * (AppBridge over PostMessageTransport), bundled for the browser here. The bridge's tools/call and
 * resources/read go to `callTool` / `readResource`, which the test backs with a real MCP client
 * connected to the server (exposed to the page), like a host forwards the app's requests over
 * its own connection.
 */

let bundle: Promise<string> | undefined;

/** ext-apps' host side as one browser script defining `ExtAppsHost.{AppBridge, PostMessageTransport}`. */
function appBridgeBundle(): Promise<string> {
  bundle ??= build({
    stdin: { contents: 'export { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";', resolveDir: repoRoot, loader: "js" },
    bundle: true,
    minify: true,
    format: "iife",
    globalName: "ExtAppsHost",
    platform: "browser",
    write: false,
    logLevel: "warning",
  }).then((result) => result.outputFiles[0]?.text ?? "");
  return bundle;
}

export interface AppCsp {
  connectDomains?: string[];
  resourceDomains?: string[];
}

/**
 * The iframe's policy from the resource's declared domains, as the MCP Apps spec has hosts build
 * it: nothing beyond what is declared (an empty list adds no origin).
 */
export function hostCsp(csp: AppCsp): string {
  const resources = (csp.resourceDomains ?? []).join(" ");
  const connect = (csp.connectDomains ?? []).join(" ");
  return [
    "default-src 'none'",
    `script-src 'self' 'unsafe-inline' ${resources}`.trim(),
    `style-src 'self' 'unsafe-inline' ${resources}`.trim(),
    `img-src 'self' data: ${resources}`.trim(),
    `font-src 'self' ${resources}`.trim(),
    `connect-src 'self' ${connect}`.trim(),
    "frame-src 'none'",
    "object-src 'none'",
    "base-uri 'self'",
  ].join("; ");
}

export interface HostedApp {
  /** The app's frame, to query and screenshot. */
  frame(): Promise<import("playwright-core").Frame>;
}

export interface EmbedOptions {
  html: string;
  csp: AppCsp;
  toolName: string;
  args: Record<string, unknown>;
  result: unknown;
  theme: "light" | "dark";
  /** The host's MCP Apps style variables (`hostContext.styles.variables`), e.g. `--color-text-primary`. */
  styles?: Record<string, string>;
}

/** Puts the host page in `page` once: the bridge bundle, and the functions that reach the server. */
export async function installHost(
  page: Page,
  server: { callTool(params: unknown): Promise<unknown>; readResource(params: unknown): Promise<unknown> },
): Promise<void> {
  await page.exposeFunction("hostCallTool", (params: unknown) => server.callTool(params));
  await page.exposeFunction("hostReadResource", (params: unknown) => server.readResource(params));
  await page.setContent('<!doctype html><html><head><title>Test host</title></head><body style="margin:0;background:#888"><div id="slot"></div></body></html>');
  await page.addScriptTag({ content: await appBridgeBundle() });
  await page.addScriptTag({ content: HOST_SCRIPT });
}

/**
 * The host's part in the page (plain browser JavaScript: this project's Node types have no DOM):
 * `embedApp(options)` replaces the slot's iframe with a fresh one holding the app, connects the
 * bridge, and once the app is initialized sends the call's arguments and result.
 */
const HOST_SCRIPT = `
window.embedApp = async function ({ html, csp, toolName, args, result, theme, styles }) {
  const slot = document.getElementById("slot");
  slot.replaceChildren();
  const iframe = document.createElement("iframe");
  iframe.setAttribute("sandbox", "allow-scripts");
  iframe.title = "MCP App";
  iframe.style.cssText = "width:900px;height:400px;border:0;display:block";
  const bridge = new ExtAppsHost.AppBridge(
    null,
    { name: "slipsnisse-test-host", version: "0.0.0" },
    { serverTools: {}, serverResources: {}, updateModelContext: { text: {} } },
    { hostContext: { theme, ...(styles ? { styles: { variables: styles } } : {}), toolInfo: { tool: { name: toolName, inputSchema: { type: "object" } } } } },
  );
  bridge.oncalltool = (params) => window.hostCallTool(params);
  bridge.onreadresource = (params) => window.hostReadResource(params);
  bridge.onupdatemodelcontext = async () => ({});
  bridge.onsizechange = ({ height }) => {
    if (height) iframe.style.height = Math.min(height + 4, 2000) + "px";
  };
  const initialized = new Promise((resolve) => {
    bridge.oninitialized = () => resolve();
  });
  // Listening before the app loads: its ui/initialize is the first thing it sends.
  slot.appendChild(iframe);
  await bridge.connect(new ExtAppsHost.PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  iframe.srcdoc = html.replace("<head>", '<head><meta http-equiv="Content-Security-Policy" content="' + csp + '">');
  await initialized;
  await bridge.sendToolInput({ arguments: args });
  await bridge.sendToolResult(result);
};
`;

/**
 * Embeds the app as a host would after a tool call: a fresh iframe, the bridge connected, then
 * the call's arguments and result once the app says it is initialized.
 */
export async function embedApp(page: Page, options: EmbedOptions): Promise<HostedApp> {
  await page.evaluate(`window.embedApp(${JSON.stringify({ ...options, csp: hostCsp(options.csp) })})`);
  return {
    async frame() {
      const handle = await page.waitForSelector("iframe[title='MCP App']");
      const frame = await handle.contentFrame();
      if (!frame) throw new Error("the app's frame is gone");
      return frame;
    },
  };
}
