import { type ClientProfile, profileOf, type Transport } from "./client-profile";
import { mintClientSessionId } from "./client-session-id";
import { UI_EXTENSION } from "./declared-capabilities";

/*
 * The table "What each client era gets" of docs/clients.md, written from ClientProfile: each
 * row is a transport and revision, profiled as a client of it that declares everything its
 * revision lets it declare, and each cell says what that profile gets. Nothing in the Worker
 * imports this module (it is left out of the bundle); test/unit/mcp/inbound/era-table.test.ts keeps the
 * doc equal to it. A new protocol revision is a row here and, for a new behaviour, a cell text.
 */

export interface ClientEra {
  /** The row's first cell. */
  label: string;
  transport: Transport;
  revision: string;
  /** The elicitation modes a client of this revision can declare. */
  elicitation: "form-and-url" | "form" | "none";
  /** Whether the revision defines core Tasks (tasks/get, tasks/result, tasks/list, tasks/cancel). */
  revisionHasTasks: boolean;
}

export const CLIENT_ERAS: readonly ClientEra[] = [
  { label: "Streamable HTTP `/mcp`, 2026-07-28", transport: "streamable-http", revision: "2026-07-28", elicitation: "form-and-url", revisionHasTasks: false },
  { label: "Streamable HTTP `/mcp`, 2025-11-25", transport: "streamable-http", revision: "2025-11-25", elicitation: "form-and-url", revisionHasTasks: true },
  { label: "Streamable HTTP `/mcp`, 2025-06-18", transport: "streamable-http", revision: "2025-06-18", elicitation: "form", revisionHasTasks: false },
  { label: "Streamable HTTP `/mcp`, 2025-03-26", transport: "streamable-http", revision: "2025-03-26", elicitation: "none", revisionHasTasks: false },
  {
    label: "legacy HTTP+SSE `/sse` (2024-11-05 transport, any 2025 revision)",
    transport: "legacy-sse",
    revision: "2025-11-25",
    elicitation: "form-and-url",
    revisionHasTasks: true,
  },
];

const COLUMNS = [
  "transport, revision",
  "progress",
  "cancel",
  "approvals, `ask_user`",
  "tasks",
  "`tools/list_changed`",
  "new runs (`resources/list_changed`)",
  "resumable stream",
  "run view in the chat (MCP Apps)",
];

/** The profile of a client of `era` that declares all it can; a 2025 Streamable HTTP client sends back the clientSessionId minted for it. */
export function fullyDeclaredProfile(era: ClientEra): ClientProfile {
  const elicitation = era.elicitation === "form-and-url" ? { form: {}, url: {} } : era.elicitation === "form" ? {} : undefined;
  const capabilities = { ...(elicitation === undefined ? {} : { elicitation }), extensions: { [UI_EXTENSION]: {} } };
  const base = { transport: era.transport, revision: era.revision };
  const profile = profileOf({ ...base, capabilities });
  if (!profile.stateless || profile.era !== "2025") return profile;
  return profileOf({ ...base, clientSessionId: mintClientSessionId(capabilities) });
}

function cells(era: ClientEra, p: ClientProfile): string[] {
  const sse = p.transport === "legacy-sse";
  const modern = p.era === "2026-07-28";
  const approvals =
    p.userChannel === "input-required"
      ? "`input_required`, retried inside `callTool`"
      : p.userChannel === "pause"
        ? "paused: the revision has no elicitation"
        : p.midCall === "sdk"
          ? "mid-call on the SSE stream"
          : `mid-call on the call's stream (client sends back its \`Mcp-Session-Id\`${p.elicitation.url ? "; URL mode for connect links too" : "; form mode: `elicitation: {}`"}), else paused`;
  const tasks =
    p.tasks === "extension"
      ? "`io.modelcontextprotocol/tasks` extension (`tasks/get`, `tasks/update`, `tasks/cancel`); status changes as `notifications/tasks` on `subscriptions/listen` (`taskIds`: the caller's own tasks only)"
      : p.tasks === "none" || !era.revisionHasTasks
        ? "none in the revision"
        : sse
          ? "core Tasks (`tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel`), answered on the SSE stream, and `notifications/tasks/status` for the tasks the stream created"
          : "core Tasks (`tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel`); no `notifications/tasks/status`: stateless, no stream outlives the request (clients poll, as the revision allows)";
  const toolsChanged = !p.listChanged
    ? "no: stateless, a GET without `Last-Event-ID` is 405, no stream to send it on"
    : modern
      ? "on `subscriptions/listen` (same isolate), else after `ttlMs` 60 s"
      : "yes, before the next message or within 15 s";
  const runsChanged = modern
    ? "yes, on `subscriptions/listen` (`resourcesListChanged`): the caller's own runs only, from any isolate; `resources/list` has `ttlMs` 0"
    : p.runsChangedAfterCall
      ? "yes, after each call on the SSE stream (and each task it creates)"
      : "no: no stream outlives the request";
  const resumable = p.resumableCalls
    ? "yes: priming event with `retry`, `Last-Event-ID` resumes a call's progress and answer"
    : modern
      ? "no: the revision cancels by closing the stream"
      : sse
        ? "no replay; a call a restart cut is answered on the client's reconnected stream (its EventSource reconnects; the SDK clients send no `Last-Event-ID`, events carry ids for those that do) with its run's outcome"
        : "no: its clients cannot take a priming event with empty data (fixed in 2025-11-25)";
  const runView = !p.ui
    ? "never"
    : modern
      ? "when the request's capabilities declare `io.modelcontextprotocol/ui`"
      : p.stateless
        ? "when `initialize` declared `io.modelcontextprotocol/ui` and the client sends back its `Mcp-Session-Id`"
        : "when its `initialize` declared `io.modelcontextprotocol/ui`";
  return [
    era.label,
    sse ? "on the SSE stream" : "on the call's stream",
    p.cancel === "close-stream" ? "close the stream" : sse ? "`notifications/cancelled`" : "`notifications/cancelled`, routed by request id",
    approvals,
    tasks,
    toolsChanged,
    runsChanged,
    resumable,
    runView,
  ];
}

/** The markdown table, one row per era. */
export function eraTableMarkdown(): string {
  const row = (values: readonly string[]) => `| ${values.join(" | ")} |`;
  return [row(COLUMNS), row(COLUMNS.map(() => "---")), ...CLIENT_ERAS.map((era) => row(cells(era, fullyDeclaredProfile(era))))].join("\n");
}
