import { z } from "zod";

export interface AdminTarget {
  baseUrl: string;
  /** ADMIN_TOKEN; leave it out where loopback requests are the local dev admin (AUTH=none). */
  token?: string;
}

const runSchema = z.looseObject({ id: z.string(), skill: z.string(), userId: z.string(), outcome: z.string(), error: z.string().nullable() });
const stepSchema = z.looseObject({
  index: z.number(),
  text: z.string(),
  toolCalls: z.array(z.looseObject({ name: z.string(), status: z.string(), error: z.string().optional() })),
});
export type AdminRun = z.infer<typeof runSchema>;
export type AdminRunStep = z.infer<typeof stepSchema>;

async function getJson(target: AdminTarget, path: string): Promise<unknown> {
  const response = await fetch(`${target.baseUrl}/admin/api${path}`, {
    headers: target.token === undefined ? {} : { Authorization: `Bearer ${target.token}` },
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`GET /admin/api${path} answered ${response.status}: ${text.slice(0, 1000)}`);
  return JSON.parse(text) as unknown;
}

/** A user's recent runs in a skill, newest first, through GET /admin/api/skills/:skill/runs. */
export async function adminRuns(target: AdminTarget, skill: string, userId: string, limit = 200): Promise<AdminRun[]> {
  const body = await getJson(target, `/skills/${skill}/runs?user=${encodeURIComponent(userId)}&limit=${limit}`);
  return z.object({ runs: z.array(runSchema) }).parse(body).runs;
}

/** One run and its steps through GET /admin/api/skills/:skill/runs/:runId. */
export async function adminRun(target: AdminTarget, skill: string, userId: string, runId: string): Promise<{ run: AdminRun; steps: AdminRunStep[] }> {
  const body = await getJson(target, `/skills/${skill}/runs/${runId}?user=${encodeURIComponent(userId)}`);
  return z.object({ run: runSchema, steps: z.array(stepSchema) }).parse(body);
}

export async function adminRunSteps(target: AdminTarget, skill: string, userId: string, runId: string): Promise<AdminRunStep[]> {
  return (await adminRun(target, skill, userId, runId)).steps;
}
