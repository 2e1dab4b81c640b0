// @ts-check
/**
 * A readable difference between two validated catalogs (defaults filled in on both sides, so
 * a default written out is not a change): skills added or removed, and inside a changed skill
 * every field of it (description, limits, retention, access, tool policy, pricing, and any field
 * the schema gains), with servers by id and experts by name, field by field. Nothing is listed
 * by name here, so a new schema field cannot be left out (test/unit/cli/catalog-diff.test.ts
 * walks the schema to prove it). `+` added, `-` removed, `~` changed.
 * @typedef {Record<string, unknown>} Obj
 */

/**
 * @param {{ skills: Record<string, Obj> }} live
 * @param {{ skills: Record<string, Obj> }} local
 * @returns {string[]} lines; empty when the catalogs are the same
 */
export function diffCatalogs(live, local) {
  /** @type {string[]} */
  const lines = [];
  for (const skill of union(live.skills, local.skills)) {
    const before = live.skills[skill];
    const after = local.skills[skill];
    if (!before && after) lines.push(`+ skill ${skill} (new: ${summary(after)})`);
    else if (before && !after) lines.push(`- skill ${skill} (not in the file: push --prune stops serving it; its history stays)`);
    else if (before && after) {
      const inner = diffSkill(before, after);
      if (inner.length > 0) lines.push(`~ skill ${skill}`, ...inner.map((line) => `    ${line}`));
    }
  }
  return lines;
}

/** Entries: servers by id and experts by name, each shown as one entry; listed after the skill's own fields. */
const ENTRIES = new Set(["servers", "experts"]);

/** @param {Obj} before @param {Obj} after */
function diffSkill(before, after) {
  const lines = union(before, after)
    .filter((key) => !ENTRIES.has(key))
    .flatMap((key) => diffFields(key, before[key], after[key]));
  const servers = [asObj(before.servers), asObj(after.servers)];
  for (const id of union(servers[0], servers[1])) lines.push(...diffEntry("server", id, servers[0][id], servers[1][id]));
  const experts = [byName(before.experts), byName(after.experts)];
  for (const name of union(experts[0], experts[1])) lines.push(...diffEntry("expert", name, experts[0][name], experts[1][name]));
  return lines;
}

/** @param {string} kind @param {string} name @param {unknown} before @param {unknown} after */
function diffEntry(kind, name, before, after) {
  if (before === undefined) return [`+ ${kind} ${name}`];
  if (after === undefined) return [`- ${kind} ${name}`];
  const fields = diffFields("", before, after);
  return fields.length === 0 ? [] : [`~ ${kind} ${name}`, ...fields.map((line) => `    ${line}`)];
}

/**
 * @param {string} path dotted field path ("" at an entry's root)
 * @param {unknown} before
 * @param {unknown} after
 * @returns {string[]}
 */
function diffFields(path, before, after) {
  if (JSON.stringify(before) === JSON.stringify(after)) return [];
  if (isObj(before) && isObj(after)) {
    return union(before, after).flatMap((key) => diffFields(path ? `${path}.${key}` : key, before[key], after[key]));
  }
  if (before === undefined) return [`+ ${path}: ${show(after)}`];
  if (after === undefined) return [`- ${path}: ${show(before)}`];
  if (typeof before === "string" && typeof after === "string" && Math.max(before.length, after.length) > 60) {
    return [`~ ${path}: text changed (${before.length} → ${after.length} characters)`];
  }
  return [`~ ${path}: ${show(before)} → ${show(after)}`];
}

/** @param {Obj} skill */
function summary(skill) {
  const servers = Object.keys(asObj(skill.servers));
  const experts = Object.keys(byName(skill.experts));
  return `${servers.length} server(s)${servers.length ? ` ${servers.join(", ")}` : ""}; ${experts.length} expert(s)${experts.length ? ` ${experts.join(", ")}` : ""}`;
}

/** @param {unknown} value */
function show(value) {
  const text = JSON.stringify(value) ?? "undefined";
  return text.length > 70 ? `${text.slice(0, 67)}…` : text;
}

/** @param {unknown} value @returns {value is Obj} */
function isObj(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** @param {unknown} value @returns {Obj} */
function asObj(value) {
  return isObj(value) ? value : {};
}

/** @param {unknown} experts @returns {Obj} */
function byName(experts) {
  /** @type {Obj} */
  const out = {};
  for (const expert of Array.isArray(experts) ? experts : []) if (isObj(expert)) out[String(expert.name)] = expert;
  return out;
}

/** @param {Obj} a @param {Obj} b */
function union(a, b) {
  return [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
}
