import { Hono } from "hono";
import { z } from "zod";
import { createServiceClient, listServiceClients, revokeServiceClient, type ServiceClient } from "../../auth/service-clients/service-client-store";
import { getSkill } from "../../catalog/catalog-store";
import type { AdminEnv } from "../admin-context";
import { InvalidParameterError, SkillNotFoundError } from "../admin-errors";
import { ServiceClientNotFoundError } from "../member-errors";

const createSchema = z.object({
  name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/),
  skills: z.array(z.string().min(1)).min(1).max(100),
});

/**
 * Service clients (OAuth client credentials, SEP-1046): automation that reaches the named
 * skills with a secret of its own. Creating one answers its secret once; revoking one refuses
 * its tokens from the next request (src/auth/service-clients/).
 */
export function serviceClientRoutes(): Hono<AdminEnv> {
  const routes = new Hono<AdminEnv>();

  routes.get("/service-clients", async (c) => c.json({ serviceClients: (await listServiceClients(c.env.DB)).map(describe) }));

  routes.post("/service-clients", async (c) => {
    const body: unknown = await c.req.json().catch(() => undefined);
    const input = createSchema.safeParse(body);
    if (!input.success) {
      throw new InvalidParameterError(
        "body",
        'must be {"name": "<letters, digits, . _ ->", "skills": ["<skill>", …]} with at least one skill',
        'Send e.g. {"name": "ci-bot", "skills": ["default"]}.',
      );
    }
    const skills = [...new Set(input.data.skills)];
    for (const skill of skills) if ((await getSkill(c.env.DB, skill)) === null) throw new SkillNotFoundError(skill);
    const { client, secret } = await createServiceClient(c.env.DB, { name: input.data.name, skills, createdBy: c.get("admin").login }, Date.now());
    const origin = new URL(c.req.url).origin;
    return c.json(
      {
        ...describe(client),
        clientSecret: secret,
        tokenEndpoint: `${origin}/token`,
        note: "The secret is shown this once; store it where the automation reads it. Revoke the client to end its access.",
      },
      201,
    );
  });

  routes.post("/service-clients/:clientId/revoke", async (c) => {
    const clientId = c.req.param("clientId");
    if (!(await revokeServiceClient(c.env.DB, clientId, Date.now()))) throw new ServiceClientNotFoundError(clientId);
    return c.json({ clientId, revoked: true });
  });

  return routes;
}

function describe(client: ServiceClient) {
  const at = (time: number | null) => (time === null ? null : new Date(time).toISOString());
  return {
    clientId: client.clientId,
    name: client.name,
    skills: client.skills,
    createdBy: client.createdBy,
    createdAt: at(client.createdAt),
    revokedAt: at(client.revokedAt),
    lastTokenAt: at(client.lastTokenAt),
  };
}
