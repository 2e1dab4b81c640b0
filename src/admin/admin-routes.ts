import { Hono } from "hono";
import { formatProblems } from "../catalog/catalog-problems";
import { replaceCatalog } from "../catalog/catalog-service";
import { requireAdmin, type AdminVariables } from "./admin-auth";

type AdminEnv = { Bindings: Env; Variables: AdminVariables };

export function adminRoutes(): Hono<AdminEnv> {
  const admin = new Hono<AdminEnv>();
  admin.use("*", requireAdmin());

  admin.put("/catalog", async (c) => {
    const body: unknown = await c.req.json().catch(() => undefined);
    if (body === undefined) return c.json({ error: "The body must be a JSON catalog document." }, 400);
    const result = await replaceCatalog(c.env, body, c.get("admin").login);
    if (!result.ok) return c.json({ error: formatProblems(result.problems), problems: result.problems }, 400);
    return c.json({ skills: result.versions });
  });

  return admin;
}
