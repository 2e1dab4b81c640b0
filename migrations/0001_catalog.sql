-- Catalog: one row per accepted version of a skill's configuration, plus a pointer per skill to
-- the version that is live. Versions are never updated or deleted, so any earlier state can be
-- restored (as a new version) and every change says who made it and when.
-- `config_json` is the SkillConfig as validated by parseCatalog (defaults filled in). Header
-- values in it are `${SECRET_NAME}` references only: parseCatalog refuses literal credentials,
-- and secret values are resolved from Worker secrets at connect time, never stored.

CREATE TABLE IF NOT EXISTS catalog_versions (
  skill TEXT NOT NULL,
  version INTEGER NOT NULL CHECK (version >= 1),
  config_json TEXT NOT NULL,
  author TEXT NOT NULL,
  note TEXT,
  created_at INTEGER NOT NULL, -- epoch milliseconds
  PRIMARY KEY (skill, version)
) WITHOUT ROWID;

-- The live version of each skill. A skill without a row here is not served (deleted), but its
-- history stays in catalog_versions and can be restored.
CREATE TABLE IF NOT EXISTS skills (
  name TEXT PRIMARY KEY,
  current_version INTEGER NOT NULL,
  updated_at INTEGER NOT NULL, -- epoch milliseconds
  FOREIGN KEY (name, current_version) REFERENCES catalog_versions (skill, version)
) WITHOUT ROWID;
