import type { McpServer, ServerContext } from "@modelcontextprotocol/server";
import { html } from "hono/html";
import type { StepRecord } from "../../experts/core/run-types";
import type { StoredRun } from "../../experts/records/run-log";
import { runWaterfall } from "../../experts/trace/run-waterfall";
import { stripControlCharacters } from "../../untrusted/control-characters";
import { APP_MIME_TYPE, UI_EXTENSION } from "../inbound/declared-capabilities";
import { RUN_APP_HTML } from "./run-app-html";

/*
 * The run view as an MCP App (the `io.modelcontextprotocol/ui` extension, "MCP Apps"): a client
 * that declares the extension gets each expert tool linked to one `ui://` resource, an HTML page
 * the host shows in a sandboxed iframe beside the tool's answer. The page reads the run's trace
 * through the host (resources/read of `slipsnisse://runs/<id>`, which then carries the waterfall
 * as HTML too) and, for a paused run, resumes it through the host (tools/call of the same expert
 * with `thread` and `approve` or `answer`, the path every paused run resumes by).
 *
 * The few names below are written here rather than imported from `@modelcontextprotocol/ext-apps`
 * (a devDependency, for the host side in tests): its server helpers are three constants and two
 * one-line wrappers around registerTool/registerResource, not worth a runtime dependency. The
 * test test/mcp/server/run-app.test.ts checks them against the package's own values.
 */

/** The older flat `_meta` key for the same link, which hosts still read (ext-apps' RESOURCE_URI_META_KEY). */
const LEGACY_RESOURCE_URI_KEY = "ui/resourceUri";
/** The one app: every expert tool links it; it shows whichever run the tool result names. */
export const RUN_APP_URI = "ui://slipsnisse/run-view.html";

/**
 * The page needs no network: it is one self-contained document and talks only to its host
 * (postMessage). Empty lists say so explicitly (the spec's default is the same: no connect-src,
 * no external resources), so a host applies `connect-src 'none'` and no outside origin.
 */
export const RUN_APP_CSP = { connectDomains: [] as string[], resourceDomains: [] as string[] };

/**
 * The extension among the server's own capabilities (SEP-2133: a server names the extensions it
 * serves), answered only to a client that declared it: an empty object, MCP Apps has no server
 * settings.
 */
export const RUN_APP_EXTENSION = { [UI_EXTENSION]: {} } as const;

/** The `_meta` an expert tool carries for a client that declared the extension (what registerAppTool writes). */
export const RUN_APP_TOOL_META = { ui: { resourceUri: RUN_APP_URI }, [LEGACY_RESOURCE_URI_KEY]: RUN_APP_URI } as const;

/**
 * On a tools/call the run view makes when the user clicks Approve, Refuse or Send answer: the
 * decision is the user's, and the trace records it so. Like an elicitation reply, it is the
 * client's word (the host forwards the app's request); it counts only from a client that declared
 * the extension, and only says who decided, never widens what the call may do.
 */
export const META_DECIDED_BY = "slipsnisse.dev/decided-by";

export function decidedInRunView(ctx: ServerContext): boolean {
  return ctx.mcpReq._meta?.[META_DECIDED_BY] === "user";
}

/** The page's `_meta.ui`, on its listing and on its contents (hosts read either). */
const RUN_APP_RESOURCE_META = { ui: { csp: RUN_APP_CSP, prefersBorder: true } };

/** Registers the app's page as a resource: only on a server built for a client that declared the extension. */
export function registerRunApp(server: McpServer): void {
  server.registerResource(
    "run-view",
    RUN_APP_URI,
    {
      title: "Expert run view",
      description: "Shows an expert answer's trace as a waterfall, and lets the user approve or answer a paused run.",
      mimeType: APP_MIME_TYPE,
      _meta: RUN_APP_RESOURCE_META,
    },
    async (uri) => ({
      contents: [{ uri: uri.href, mimeType: APP_MIME_TYPE, text: RUN_APP_HTML, _meta: RUN_APP_RESOURCE_META }],
    }),
  );
}

/** In the chat the person reading decides a waiting call, with the view's own buttons. */
const WAITING_IN_APP = "Waiting for your decision: approve or refuse it above.";

/**
 * The run's trace as the app shows it: the dashboard run page's waterfall (the same renderer,
 * src/experts/trace/run-waterfall.ts), then the answer or error. A paused run's "answer" is its
 * question, which the view shows once, as the question with its buttons. Every string from the run is
 * escaped by the renderer's `html` template and loses its control characters here; the app
 * inserts it as inert markup (no script, no handlers, no URLs survive its own filter either).
 */
export async function runViewFragment(run: StoredRun, steps: readonly StepRecord[]): Promise<string> {
  const end = run.endedAt ?? Date.now();
  const fragment =
    await html`<section class="run-trace" aria-label="Steps">${steps.length === 0 ? html`<p class="muted">No steps recorded.</p>` : runWaterfall(steps, run.startedAt, end, { waitingNote: WAITING_IN_APP })}</section>
${run.error ? html`<h2>Error</h2><p class="error">${run.error}</p>` : ""}${run.answer && run.outcome !== "paused" ? html`<h2>Answer</h2><pre class="answer">${run.answer}</pre>` : ""}`;
  return stripControlCharacters(fragment.toString());
}
