import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { listVersions } from "../../src/catalog/catalog-store";
import type { CatalogProblem } from "../../src/catalog/catalog-problems";
import { uniqueSkill } from "../support/catalog-test-data";
import { ADMIN, admin } from "./admin-test-client";

const codeExpert = { name: "coder", description: "writes scripts", provider: "google", mode: "code" };

/** The admin API of a deployment whose wrangler.toml has no `[[worker_loaders]]`. */
async function withoutLoader(method: string, path: string, body: unknown): Promise<{ status: number; problems: CatalogProblem[] }> {
  const { LOADER: _loader, ...rest } = env;
  const ctx = createExecutionContext();
  const request = new Request(`${ADMIN}${path}`, { method, headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const response = await createApp().fetch(request, rest as unknown as Env, ctx);
  await waitOnExecutionContext(ctx);
  const parsed = (await response.json()) as { problems?: CatalogProblem[] };
  return { status: response.status, problems: parsed.problems ?? [] };
}

describe("a code-mode expert and the deployment's loader binding", () => {
  it("is refused at its mode's path, with the binding to add, when the Worker has no LOADER; nothing is saved", async () => {
    const skill = uniqueSkill("code-noloader");
    const put = await withoutLoader("PUT", `/skills/${skill}`, { experts: [{ name: "plain", description: "d", provider: "google" }, codeExpert] });
    expect(put.status).toBe(400);
    expect(put.problems).toEqual([
      expect.objectContaining({
        path: `$.skills.${skill}.experts[1].mode`,
        message: expect.stringContaining("no `worker_loaders` binding"),
        fix: expect.stringContaining('`[[worker_loaders]]` with `binding = "LOADER"`'),
      }),
    ]);
    const whole = await withoutLoader("PUT", "/catalog?prune=false", { skills: { [skill]: { experts: [codeExpert] } } });
    expect(whole.status).toBe(400);
    expect(whole.problems.map((p) => p.path)).toEqual([`$.skills.${skill}.experts[0].mode`]);
    expect(await listVersions(env.DB, skill)).toEqual([]);
  });

  it("is saved where the Worker has the binding", async () => {
    const skill = uniqueSkill("code-loader");
    const put = await admin("PUT", `/skills/${skill}`, { experts: [codeExpert] });
    expect(put.status).toBe(201);
    expect((await listVersions(env.DB, skill)).length).toBe(1);
  });
});
