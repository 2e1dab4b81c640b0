// @ts-check
/**
 * The `[env.<tenant>]` block of wrangler.toml. wrangler does not inherit bindings, vars or
 * services into an environment, so every one is repeated; `migrations` would be inherited but
 * is written too, so the block reads complete on its own.
 * @typedef {{ databaseId: string, cacheId: string, oauthKvId: string }} TenantIds
 */

/**
 * @param {{ tenant: string, workerName: string, ids: TenantIds, vars: string[], placeholder: boolean }} options
 *   vars: `KEY = value` lines copied from the top-level [vars] (TENANT is replaced)
 */
export function envBlock({ tenant, workerName, ids, vars, placeholder }) {
  const env = `env.${tenant}`;
  const tenantVars = [...vars.filter((line) => !/^TENANT\s*=/.test(line)), `TENANT = ${JSON.stringify(tenant)}`];
  return `
# Tenant "${tenant}", written by \`slipsnisse tenant add ${tenant}\`: its own Worker, D1, KV, Durable Objects.${
    placeholder
      ? "\n# PLACEHOLDER ids (--dry-run): run `slipsnisse tenant add` without --dry-run, or create the\n# resources yourself and put their ids here, before deploying."
      : ""
  }
[${env}]
name = ${JSON.stringify(workerName)}

[${env}.ai]
binding = "AI"

[[${env}.d1_databases]]
binding = "DB"
database_name = ${JSON.stringify(workerName)}
database_id = ${JSON.stringify(ids.databaseId)}
migrations_dir = "migrations"

[[${env}.kv_namespaces]]
binding = "CACHE"
id = ${JSON.stringify(ids.cacheId)}

[[${env}.kv_namespaces]]
binding = "OAUTH_KV"
id = ${JSON.stringify(ids.oauthKvId)}

[[${env}.durable_objects.bindings]]
name = "EXPERT_SESSION"
class_name = "ExpertSession"

[[${env}.durable_objects.bindings]]
name = "LEGACY_SSE"
class_name = "LegacySseSession"

[[${env}.durable_objects.bindings]]
name = "LIVE_FEED"
class_name = "LiveRunFeed"

[[${env}.durable_objects.bindings]]
name = "USER_CONNECTIONS"
class_name = "UserConnections"

[[${env}.durable_objects.bindings]]
name = "SKILL_LIMITER"
class_name = "SkillLimiter"

[[${env}.migrations]]
tag = "v1"
new_sqlite_classes = ["ExpertSession", "LegacySseSession"]

[[${env}.migrations]]
tag = "v2"
new_sqlite_classes = ["LiveRunFeed"]

[[${env}.migrations]]
tag = "v3"
new_sqlite_classes = ["UserConnections"]

[[${env}.migrations]]
tag = "v4"
new_sqlite_classes = ["SkillLimiter"]

[[${env}.services]]
binding = "SELF"
service = ${JSON.stringify(workerName)}

[[${env}.worker_loaders]]
binding = "LOADER"

[${env}.vars]
${tenantVars.join("\n")}
`;
}

/** @param {string} toml @returns {string | undefined} the top-level Worker name */
export function topLevelName(toml) {
  return /^name\s*=\s*"([^"]+)"/m.exec(toml)?.[1];
}

/** @param {string} toml @param {string} tenant */
export function hasEnv(toml, tenant) {
  return new RegExp(`^\\[\\[?env\\.${tenant}[.\\]]`, "m").test(toml);
}

/**
 * `KEY = value` lines of the top-level [vars] table (simple one-line values, as Slipsnisse's
 * wrangler.toml has; comments dropped).
 * @param {string} toml
 * @returns {string[]}
 */
export function topLevelVars(toml) {
  const lines = toml.split("\n");
  const start = lines.findIndex((line) => line.trim() === "[vars]");
  if (start < 0) return [];
  /** @type {string[]} */
  const vars = [];
  for (const line of lines.slice(start + 1)) {
    const trimmed = line.trim();
    if (trimmed.startsWith("[")) break;
    if (/^[A-Za-z_][A-Za-z0-9_]*\s*=/.test(trimmed)) vars.push(trimmed);
  }
  return vars;
}
