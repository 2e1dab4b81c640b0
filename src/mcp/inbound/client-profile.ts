import type { ClientCapabilities } from "@modelcontextprotocol/server";
import { declaredBy } from "./client-session-id";
import { declaresUi, formElicitation, urlElicitation } from "./declared-capabilities";

/*
 * What a client is, decided once per request (or once per legacy SSE stream) from its
 * transport, the protocol revision it names and the capabilities it declared. Every feature that
 * differs between clients (how a run reaches its user mid-call, tasks, list changes, resumable
 * streams, the run view) decides from this value, never from the version string: a new protocol
 * revision is one more row here. The table "What each client era gets" in docs/clients.md is
 * generated from it (era-table.ts) and a test keeps the two equal.
 */

export type Transport = "streamable-http" | "legacy-sse";

/**
 * The two ways of serving MCP: the 2025 revisions (an `initialize` handshake; over Streamable
 * HTTP each POST still reaches a fresh server, so the handshake's result travels in the
 * clientSessionId) and 2026-07-28 (no handshake: each request names its revision and carries
 * the client's capabilities in its envelope). The SDK calls them "legacy" and "modern".
 */
export type Era = "2025" | "2026-07-28";

/** How a run reaches the human behind the client when it needs an approval or an answer (user-input.ts). */
export type UserChannelKind =
  /** A server-to-client `elicitation/create` while the call waits (2025 clients that declared form elicitation). */
  | "elicit"
  /** An `input_required` answer the client retries with the user's reply (2026-07-28, SEP-2322). */
  | "input-required"
  /** The call answers with the question; the orchestrator resumes with `thread` and `approve`/`answer`. */
  | "pause";

/** Where a mid-call request to the client goes, for the clients that can take one. */
export type MidCallRoute =
  /** The SDK's own request on a server that saw `initialize` (legacy SSE keeps one per connection). */
  | "sdk"
  /** Written onto the call's own SSE stream; the reply POST reaches the run through the user's session (mid-call-requests.ts). */
  | "call-stream"
  /** The client takes no requests mid-call. */
  | "none";

export interface ClientProfile {
  readonly transport: Transport;
  /** The revision the client named (the MCP-Protocol-Version header, or its `initialize`); undefined when it named none. */
  readonly revision: string | undefined;
  readonly era: Era;
  /** The `Mcp-Session-Id` the client sent (one minted here, or any of its own): tells a user's clients apart for cancels. */
  readonly clientSessionId: string | undefined;
  /** The capabilities the client declared, wherever it declared them; undefined when this request cannot know them. */
  readonly declared: ClientCapabilities | undefined;
  readonly elicitation: { readonly form: boolean; readonly url: boolean };
  /** The client declared MCP Apps (`io.modelcontextprotocol/ui`): the expert tools link the run view (run-app.ts). */
  readonly ui: boolean;
  readonly userChannel: UserChannelKind;
  readonly midCall: MidCallRoute;
  /** How the client stops a call: `notifications/cancelled` naming its request id, or closing the call's stream. */
  readonly cancel: "notification" | "close-stream";
  /** MCP Tasks: core (2025-11-25's `tasks/*`), the 2026-07-28 extension (SEP-2663), or none. */
  readonly tasks: "core" | "extension" | "none";
  /**
   * Whether the client can hear `notifications/tools/list_changed` and `resources/list_changed`:
   * a 2026-07-28 client through `subscriptions/listen`, a legacy SSE stream on its stream.
   * Stateless 2025 Streamable HTTP has no stream to send them on (GET is 405).
   */
  readonly listChanged: boolean;
  /** After each call, the connection hears that the user's run list changed (legacy SSE: the only 2025 stream that outlives a call). */
  readonly runsChangedAfterCall: boolean;
  /** A `tools/call` answered as SSE opens with a priming event and can be resumed with Last-Event-ID (resumable-calls.ts). */
  readonly resumableCalls: boolean;
  /** The request reaches a server that saw no `initialize` and keeps nothing between requests. */
  readonly stateless: boolean;
}

/** What the profile is read from. */
export interface ProfileSource {
  transport: Transport;
  revision: string | undefined;
  clientSessionId?: string | undefined;
  /**
   * The capabilities the request itself declares: an `initialize`'s, or a 2026-07-28 request's
   * envelope. A stateless 2025 request declares none; its clientSessionId says what its
   * `initialize` declared.
   */
  capabilities?: unknown;
}

/**
 * The 2026-07-28 revision and any later one: every revision that is not a 2024 or 2025 one
 * (the SDK's own rule for the modern era). No revision named is the 2025 era (the spec's default
 * for a request without the header is 2025-03-26).
 */
export function eraOf(revision: string | undefined): Era {
  return revision === undefined || /^202[45]-/.test(revision) ? "2025" : "2026-07-28";
}

/** The revision whose clients take a priming event with empty data (the fix of 2025-11-25 Streamable HTTP). */
const RESUMABLE_REVISION = "2025-11-25";

export function profileOf({ transport, revision, clientSessionId, capabilities }: ProfileSource): ClientProfile {
  const era = eraOf(revision);
  const stateless = transport === "streamable-http";
  // A stateless 2025 request declares nothing itself but its `initialize`; a clientSessionId minted there says what it declared.
  const fromSessionId = stateless && era === "2025" && capabilities === undefined ? declaredBy(clientSessionId) : undefined;
  const declared = (fromSessionId ?? capabilities) as ClientCapabilities | undefined;
  const elicitation = { form: formElicitation(declared), url: urlElicitation(declared) };
  const takesRequests = elicitation.form || elicitation.url;
  return {
    transport,
    revision,
    era,
    clientSessionId,
    declared,
    elicitation,
    ui: declaresUi(declared),
    userChannel: !elicitation.form ? "pause" : era === "2026-07-28" ? "input-required" : "elicit",
    midCall: era === "2026-07-28" || !takesRequests ? "none" : stateless ? (fromSessionId ? "call-stream" : "none") : "sdk",
    cancel: era === "2026-07-28" ? "close-stream" : "notification",
    // 2025 Tasks: on a legacy SSE stream, and on every Streamable HTTP request of that era
    // that names a revision (the capability rides on `initialize`, which names it in its params).
    tasks: era === "2026-07-28" ? "extension" : transport === "legacy-sse" || revision !== undefined ? "core" : "none",
    listChanged: transport === "legacy-sse" || era === "2026-07-28",
    runsChangedAfterCall: transport === "legacy-sse",
    resumableCalls: stateless && revision === RESUMABLE_REVISION,
    stateless,
  };
}
