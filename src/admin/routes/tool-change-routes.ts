import { Hono } from "hono";
import { z } from "zod";
import { SERVER_ID_PATTERN } from "../../catalog/catalog-schema";
import { acceptToolChange, listPendingToolChanges } from "../../downstream/tool-change-review";
import { invalidateToolLists } from "../../downstream/tool-list-invalidation";
import { readJsonBody, skillParam, type AdminContext, type AdminEnv } from "../admin-context";
import { InvalidBodyError, InvalidParameterError, NoPendingToolChangeError, StaleToolChangeError, ToolPinNotFoundError } from "../admin-errors";

const acceptBodySchema = z.object({ hash: z.string().regex(/^[0-9a-f]{64}$/) });

/**
 * Changed tool definitions (src/downstream/tool-pins.ts): a downstream tool whose definition
 * differs from its pin is withheld from the experts until an admin accepts the new one here.
 * GET lists the pending changes with both definitions; POST .../accept with `{"hash"}` (the
 * pending hash the admin reviewed) pins it and drops the skill's cached lists for that server.
 */
export function registerToolChangeRoutes(routes: Hono<AdminEnv>): Hono<AdminEnv> {
  routes.get("/skills/:skill/tool-changes", async (c) => {
    const skill = skillParam(c);
    return c.json({ skill, changes: await listPendingToolChanges(c.env.DB, skill) });
  });

  routes.post("/skills/:skill/tool-changes/:server/:tool/accept", async (c) => {
    const skill = skillParam(c);
    const server = serverParam(c);
    const tool = c.req.param("tool");
    const body = acceptBodySchema.safeParse(await readJsonBody(c));
    if (!body.success) {
      throw new InvalidBodyError([
        {
          path: "$.hash",
          message: "expected the pending definition's SHA-256 as 64 lowercase hex digits",
          fix: `copy pending.hash from GET /admin/api/skills/${skill}/tool-changes`,
        },
      ]);
    }
    const outcome = await acceptToolChange(c.env.DB, skill, server, tool, body.data.hash, c.get("admin").login);
    if (outcome.status === "no-such-tool") throw new ToolPinNotFoundError(skill, server, tool);
    if (outcome.status === "nothing-pending") throw new NoPendingToolChangeError(skill, server, tool, outcome.pinnedHash);
    if (outcome.status === "stale") throw new StaleToolChangeError(skill, server, tool, body.data.hash, outcome.pendingHash);
    const invalidated = await invalidateToolLists(c.env.CACHE, skill, server);
    return c.json({ skill, server, tool, hash: outcome.hash, accepted: true, invalidatedCacheEntries: invalidated });
  });

  return routes;
}

/** The routes on a fresh sub-app, for `admin.route("/", toolChangeRoutes())` beside the others. */
export function toolChangeRoutes(): Hono<AdminEnv> {
  return registerToolChangeRoutes(new Hono<AdminEnv>());
}

function serverParam(c: AdminContext): string {
  const server = c.req.param("server") ?? "";
  if (!SERVER_ID_PATTERN.test(server)) {
    throw new InvalidParameterError(
      `server id "${server.slice(0, 40)}"`,
      "is not a valid server id",
      "Use the `server` named in GET /admin/api/skills/<skill>/tool-changes.",
    );
  }
  return server;
}
