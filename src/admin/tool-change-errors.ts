import { AdminApiError } from "./admin-errors";

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
