import type { Context } from "hono";
import { z } from "zod";
import { SKILL_NAME_PATTERN } from "../catalog/catalog-schema";
import type { ChangeMeta } from "../catalog/catalog-store";
import type { AdminVariables } from "./admin-auth";
import { MAX_JSON_DEPTH, jsonDepthOverLimit } from "../untrusted/json-depth";
import { InvalidParameterError, JsonTooDeepError, NotJsonError, UnsupportedMediaTypeError } from "./admin-errors";
import { isJsonContentType } from "./json-content-type";

export type AdminEnv = { Bindings: Env; Variables: AdminVariables };
export type AdminContext = Context<AdminEnv>;

/**
 * The body as untrusted JSON; what it must look like is checked by the route (parseCatalog).
 * Only application/json (jsonBodiesOnly refuses other bodies first; a chunked body without a
 * type is caught here), and never nested past MAX_JSON_DEPTH, checked on the text before parsing.
 */
export async function readJsonBody(c: AdminContext): Promise<unknown> {
  const contentType = c.req.header("content-type") ?? null;
  if (!isJsonContentType(contentType)) throw new UnsupportedMediaTypeError(contentType);
  const text = await c.req.text();
  const depth = jsonDepthOverLimit(text);
  if (depth !== null) throw new JsonTooDeepError(depth, MAX_JSON_DEPTH);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new NotJsonError();
  }
}

const noteSchema = z.string().trim().min(1).max(500).optional();

/** Who made the change (the signed-in admin's login) and an optional `?note=` for the history. */
export function changeMeta(c: AdminContext): ChangeMeta {
  const note = noteSchema.safeParse(c.req.query("note") || undefined);
  if (!note.success) throw new InvalidParameterError("note", "must be 1-500 characters", "Shorten the `note` query parameter.");
  const author = c.get("admin").login;
  return note.data === undefined ? { author } : { author, note: note.data };
}

export function skillParam(c: AdminContext): string {
  return checkSkillName(c.req.param("skill") ?? "");
}

export function checkSkillName(skill: string): string {
  if (!SKILL_NAME_PATTERN.test(skill)) {
    throw new InvalidParameterError(
      `skill name "${skill.slice(0, 80)}"`,
      "is not allowed: it becomes the URL path /s/<skill>/mcp, so use 1-63 of lowercase a-z, 0-9 and `-`, starting with a letter or digit",
      "Use a name such as `support-tier-1`.",
    );
  }
  return skill;
}

const versionSchema = z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER);

export function versionParam(c: AdminContext): number {
  const parsed = versionSchema.safeParse(c.req.param("version"));
  if (!parsed.success)
    throw new InvalidParameterError("version", "must be a whole number of at least 1", "List the versions with GET /admin/api/skills/<skill>/versions.");
  return parsed.data;
}
