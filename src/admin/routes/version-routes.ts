import { Hono } from "hono";
import { restoreSkillVersion } from "../../catalog/catalog-service";
import { getSkill, getVersion, listVersions } from "../../catalog/catalog-store";
import { SkillVersionNotFoundError } from "../../catalog/catalog-errors";
import { changeMeta, skillParam, versionParam, type AdminEnv } from "../admin-context";
import { SkillNotFoundError } from "../admin-errors";
import { gateWrite } from "../evals/eval-gate";
import { assertIfMatch } from "../skill-writes";

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
    const live = await getSkill(c.env.DB, skill);
    if (c.req.header("if-match") !== undefined) assertIfMatch(c, skill, live?.version ?? null);
    // A restore is a write like any other: gated on the restored version's evals when asked.
    const stored = await getVersion(c.env.DB, skill, version);
    if (stored) await gateWrite(c, skill, stored.config, live);
    const restored = await restoreSkillVersion(c.env, skill, version, changeMeta(c).author);
    return c.json({ skill, version: restored, restoredFrom: version, changed: true });
  });

  return routes;
}
