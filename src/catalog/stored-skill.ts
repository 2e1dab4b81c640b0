import { z } from "zod";
import { skillSchema, type SkillConfig } from "./catalog-schema";
import { StoredSkillInvalidError } from "./catalog-errors";

/**
 * Stored JSON is read back through the schema: rows may have been edited by hand or written by
 * an older build, and a config that skips validation would reach the runner unchecked.
 */
export function readStoredConfig(skill: string, version: number, json: string, where: "D1" | "KV"): SkillConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    throw new StoredSkillInvalidError(skill, version, where, "it is not JSON");
  }
  const parsed = skillSchema.safeParse(raw);
  if (!parsed.success) throw new StoredSkillInvalidError(skill, version, where, z.prettifyError(parsed.error));
  return parsed.data;
}
