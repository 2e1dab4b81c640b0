import type { CatalogProblem } from "../catalog/catalog-problems";
import { formatProblems } from "../catalog/catalog-problems";
import { SlipsnisseError } from "../errors";
import { jsonDepthMessage } from "../untrusted/json-depth";

/** An admin API refusal: the HTTP status travels with the error so every route answers alike. */
export abstract class AdminApiError extends SlipsnisseError {
  abstract readonly status: 400 | 404 | 409 | 412 | 415;
  /** Catalog problems by JSON path, when the refusal is about content. */
  readonly problems: readonly CatalogProblem[] = [];
}

export class InvalidBodyError extends AdminApiError {
  readonly kind = "invalid-body";
  readonly status = 400;
  readonly fix = "Correct each listed path as its fix says and send the request again; nothing was saved.";
  constructor(override readonly problems: readonly CatalogProblem[]) {
    super(`The request has ${problems.length} problem(s):\n${formatProblems(problems)}`);
  }
}

export class NotJsonError extends AdminApiError {
  readonly kind = "not-json";
  readonly status = 400;
  readonly fix = "Send a JSON document with the header Content-Type: application/json.";
  constructor() {
    super("The request body is not valid JSON.");
  }
}

/**
 * A body sent as anything but JSON. Browsers send text/plain, form and multipart bodies to any
 * origin without a CORS preflight; requiring application/json means a page on another site
 * cannot write through the API even where a browser would carry the credentials.
 */
export class UnsupportedMediaTypeError extends AdminApiError {
  readonly kind = "unsupported-media-type";
  readonly status = 415;
  readonly fix = "Send the body as JSON with the header Content-Type: application/json.";
  constructor(readonly contentType: string | null) {
    super(
      contentType === null
        ? "The request has a body but no Content-Type; this API takes only application/json."
        : `The request body is ${JSON.stringify(contentType.slice(0, 100))}; this API takes only application/json.`,
    );
  }
}

/** JSON nested deeper than MAX_JSON_DEPTH, refused before it is parsed (src/untrusted/json-depth.ts). */
export class JsonTooDeepError extends AdminApiError {
  readonly kind = "json-too-deep";
  readonly status = 400;
  readonly fix = "Send a flatter document: no catalog needs that much nesting.";
  constructor(
    readonly depth: number,
    readonly limit: number,
  ) {
    super(jsonDepthMessage("The request body", limit));
  }
}

export class InvalidParameterError extends AdminApiError {
  readonly kind = "invalid-parameter";
  readonly status = 400;
  constructor(
    readonly parameter: string,
    readonly detail: string,
    readonly fix: string,
  ) {
    super(`The ${parameter} ${detail}.`);
  }
}

export class SkillNotFoundError extends AdminApiError {
  readonly kind = "skill-not-found";
  readonly status = 404;
  readonly fix: string;
  constructor(readonly skill: string) {
    super(`This tenant has no skill named "${skill}".`);
    this.fix = `Create it with PUT /admin/api/skills/${skill}, or list the skills with GET /admin/api/skills.`;
  }
}

export class EntryNotFoundError extends AdminApiError {
  readonly kind = "entry-not-found";
  readonly status = 404;
  readonly fix: string;
  constructor(
    readonly skill: string,
    readonly entry: "server" | "expert",
    readonly entryName: string,
  ) {
    super(`Skill "${skill}" has no ${entry} "${entryName}".`);
    this.fix = `Read the skill with GET /admin/api/skills/${skill} for its ${entry}s, or create this one with POST /admin/api/skills/${skill}/${entry}s.`;
  }
}

export class DuplicateEntryError extends AdminApiError {
  readonly kind = "duplicate-entry";
  readonly status = 409;
  readonly fix: string;
  constructor(
    readonly skill: string,
    readonly entry: "server" | "expert",
    readonly entryName: string,
  ) {
    super(`Skill "${skill}" already has a ${entry} "${entryName}".`);
    this.fix = `Change it with PUT /admin/api/skills/${skill}/${entry}s/${entryName}, or pick another name.`;
  }
}

/** Deleting a server that experts still use would leave them pointing at nothing. */
export class ServerInUseError extends AdminApiError {
  readonly kind = "server-in-use";
  readonly status = 409;
  readonly fix: string;
  constructor(
    readonly skill: string,
    readonly server: string,
    override readonly problems: readonly CatalogProblem[],
  ) {
    super(`Server "${server}" of skill "${skill}" is still used:\n${formatProblems(problems)}`);
    this.fix = `Remove "${server}" from those experts' internal_tools first, or replace the whole skill with PUT /admin/api/skills/${skill}.`;
  }
}

export class VersionMismatchError extends AdminApiError {
  readonly kind = "version-mismatch";
  readonly status = 412;
  readonly fix: string;
  constructor(
    readonly skill: string,
    readonly expected: string,
    readonly live: number | null,
  ) {
    super(`Skill "${skill}" is at version ${live ?? "(none)"}, not ${expected} as If-Match expects: someone else changed it.`);
    this.fix = `Read it again with GET /admin/api/skills/${skill}, reapply your change and send it with the new version.`;
  }
}

/** No pin exists for that tool: it was never listed for this skill (or the names are wrong). */
export class ToolPinNotFoundError extends AdminApiError {
  readonly kind = "tool-pin-not-found";
  readonly status = 404;
  readonly fix: string;
  constructor(
    readonly skill: string,
    readonly serverId: string,
    readonly toolName: string,
  ) {
    super(`Skill "${skill}" has no pinned tool "${toolName}" on server "${serverId}".`);
    this.fix = `List the pending changes with GET /admin/api/skills/${skill}/tool-changes and use the server and tool named there.`;
  }
}

/** The tool has no pending change (already accepted, or the server went back to its pinned definition). */
export class NoPendingToolChangeError extends AdminApiError {
  readonly kind = "no-pending-tool-change";
  readonly status = 409;
  readonly fix: string;
  constructor(
    readonly skill: string,
    readonly serverId: string,
    readonly toolName: string,
    readonly pinnedHash: string,
  ) {
    super(`Tool "${toolName}" on server "${serverId}" of skill "${skill}" has no pending change; its pinned definition is ${pinnedHash}.`);
    this.fix = `Nothing to accept. GET /admin/api/skills/${skill}/tool-changes lists what is pending.`;
  }
}

/** The server changed the tool again since the admin looked: the reviewed definition is not the pending one. */
export class StaleToolChangeError extends AdminApiError {
  readonly kind = "stale-tool-change";
  readonly status = 409;
  readonly fix: string;
  constructor(
    readonly skill: string,
    readonly serverId: string,
    readonly toolName: string,
    readonly expectedHash: string,
    readonly pendingHash: string,
  ) {
    super(`Tool "${toolName}" on server "${serverId}" changed again: the pending definition is ${pendingHash}, not ${expectedHash}.`);
    this.fix = `Review the new definition with GET /admin/api/skills/${skill}/tool-changes and accept it with its hash.`;
  }
}

/** No run with that id in that user's session of the skill. */
export class RunNotFoundError extends AdminApiError {
  readonly kind = "run-not-found";
  readonly status = 404;
  readonly fix: string;
  constructor(
    readonly skill: string,
    readonly user: string,
    readonly runId: string,
  ) {
    super(`User "${user}" has no run ${runId} in skill "${skill}".`);
    this.fix = `List the user's runs with GET /admin/api/skills/${skill}/runs?user=${encodeURIComponent(user)}.`;
  }
}

export class RunNotIndexedError extends AdminApiError {
  readonly kind = "run-not-indexed";
  readonly status = 404;
  readonly fix = "List runs with GET /admin/api/runs (filters: skill, expert, user, outcome, from, to). A run is indexed once it has ended.";
  constructor(readonly runId: string) {
    super(`No finished run ${runId} is in this tenant's run index.`);
  }
}
