import { log } from "../observability/logger";

/**
 * Tells the MCP surface that a skill's experts changed, so it can push
 * `notifications/tools/list_changed` to the listen streams it holds. The catalog service
 * announces every write; the MCP handler registers a listener, so neither the catalog nor the
 * admin API knows about MCP. Delivery is per isolate: a client whose stream lives in another
 * isolate learns of the change from the tools/list `ttlMs` instead.
 */
export type SkillChangeListener = (skill: string) => void;

const listeners = new Set<SkillChangeListener>();

export function onSkillChanged(listener: SkillChangeListener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function announceSkillChanged(skill: string): void {
  for (const listener of listeners) {
    try {
      listener(skill);
    } catch (error) {
      log("warn", "skill change listener failed", { skill, error: String(error) });
    }
  }
}
