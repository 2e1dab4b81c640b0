import { SlipsnisseError } from "../errors";

/** What a withheld tool's note and refusal say after "tool X on server Y ". */
export const CHANGED_DEFINITION_REASON = "changed its definition and is withheld until an admin accepts it";
/** The same for a tool the server added after its first listing. */
export const NEW_TOOL_REASON = "is new since the server's first listing and is withheld until an admin accepts it";

/** callTool on a tool the pool withheld at its latest listing (defence in depth: the runner never offers it). */
export class ToolWithheldError extends SlipsnisseError {
  readonly kind = "tool-withheld";
  readonly fix: string;
  constructor(
    readonly skill: string,
    readonly serverId: string,
    readonly toolName: string,
    readonly reason: string,
  ) {
    super(`Tool "${toolName}" on server "${serverId}" ${reason}.`);
    this.fix = `An admin reviews the change with GET /admin/api/skills/${skill}/tool-changes and accepts it with POST /admin/api/skills/${skill}/tool-changes/${serverId}/${toolName}/accept.`;
  }
}

/** The pins could not be read or written (D1 failed): the server's tools are withheld, not trusted unchecked. */
export class ToolPinCheckFailedError extends SlipsnisseError {
  readonly kind = "tool-pin-check-failed";
  readonly fix =
    "Check that the D1 binding DB works and has migrations/0002_tool_pins.sql applied (`npx wrangler d1 migrations apply DB --remote`, plus `--env <tenant>` for a tenant; `npm start` applies them locally); the next listing retries.";
  constructor(
    readonly serverId: string,
    readonly reason: string,
  ) {
    super(`The tools of downstream server "${serverId}" could not be checked against their pinned definitions: ${reason}`);
  }
}
