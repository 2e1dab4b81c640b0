import { html } from "hono/html";
import { SKILL_NAME_PATTERN } from "../catalog/catalog-schema";

/**
 * `?skill=` on the overview, live, skills and servers pages (where `/s/<skill>/admin/…` leads,
 * dashboard-deep-links.ts): the page shows that skill only. A value that is not a skill name is
 * ignored rather than refused, so the page still shows everything.
 */
export function skillParam(value: string | undefined): string | undefined {
  return value !== undefined && SKILL_NAME_PATTERN.test(value) ? value : undefined;
}

/** Keeps the skill's entries (by `name` or `skill`) when filtering; all of them otherwise. */
export function onlySkill<T extends { name: string } | { skill: string }>(items: readonly T[], skill: string | undefined): T[] {
  return skill === undefined ? [...items] : items.filter((item) => ("name" in item ? item.name : item.skill) === skill);
}

/** The line a filtered page starts with: which skill, its other views, and the way back to all skills. */
export function skillFilterNotice(skill: string | undefined, allPath: string) {
  if (skill === undefined) return "";
  return html`<p class="notice">Only the skill <strong>${skill}</strong>: <a href="/admin?skill=${skill}">overview</a> · <a href="/admin/runs?skill=${skill}">runs</a> · <a href="/admin/live?skill=${skill}">live</a> · <a href="/admin/skills?skill=${skill}">experts</a> · <a href="/admin/servers?skill=${skill}">servers</a> · <a href="/admin/catalog/${skill}">catalog history</a> · <a href="${allPath}">all skills</a></p>`;
}
