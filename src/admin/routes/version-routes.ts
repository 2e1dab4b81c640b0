import { Hono } from "hono";
import { getVersion, listVersions } from "../../catalog/catalog-store";
import { SkillVersionNotFoundError } from "../../catalog/catalog-errors";
import { skillParam, versionParam, type AdminEnv } from "../admin-context";
import { SkillNotFoundError } from "../admin-errors";
import { restoreSkill } from "../skill-writes";

/** A skill's history: every accepted change is a version; restoring one adds a new version. */
export function versionRoutes(): Hono<AdminEnv> {
  const routes = new Hono<AdminEnv>();

  routes.get("/skills/:skill/versions", async (c) => {
    const skill = skillParam(c);
    const versions = await listVersions(c.env.DB, skill);
    if (versions.length === 0) throw new SkillNotFoundError(skill);
    return c.json({ skill, versions: versions.map((v) => ({ ...v, time: new Date(v.createdAt).toISOString() })) });
  });

  routes.get("/skills/:skill/versions/:version", async (c) => {
    const skill = skillParam(c);
    const version = versionParam(c);
    const stored = await getVersion(c.env.DB, skill, version);
    if (!stored) throw new SkillVersionNotFoundError(skill, version);
    return c.json({ ...stored, time: new Date(stored.createdAt).toISOString() });
  });

  routes.post("/skills/:skill/versions/:version/restore", async (c) => {
    const skill = skillParam(c);
    const version = versionParam(c);
    // A restore is a write like any other: gated on the restored version's evals.
    const restored = await restoreSkill(c, skill, version);
    return c.json({ skill, version: restored, restoredFrom: version, changed: true });
  });

  return routes;
}
