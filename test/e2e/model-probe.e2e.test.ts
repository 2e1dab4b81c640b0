import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { startFakeOpenAI, textReply, type FakeOpenAIServer } from "./harness/fake-openai-server";
import { pushSharedSkill, sharedWranglerDev } from "./harness/shared-wrangler-dev";
import type { WranglerDev } from "./harness/wrangler-dev";

/** This file's skill on the shared wrangler dev. */
const SKILL = "model-probe";

const modelsSchema = z.object({
  models: z.array(
    z.looseObject({ model: z.string(), experts: z.array(z.string()), probe: z.looseObject({ ok: z.boolean(), latencyMs: z.number() }).optional() }),
  ),
});

/**
 * `GET /admin/api/models?probe=1` through `wrangler dev` sends exactly one chat request per
 * distinct configured model to the real OpenAI-compatible endpoint, and none without `probe=1`.
 */
describe("model probe end to end", () => {
  let dev: WranglerDev;
  let fake: FakeOpenAIServer;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    dev = await sharedWranglerDev();
    const expert = (name: string, model: string) => ({ name, description: "d", provider: "openai-compatible" as const, base_url: fake.baseURL, model });
    await pushSharedSkill(dev, SKILL, { experts: [expert("one", "fake-a"), expert("two", "fake-a"), expert("three", "fake-b")] });
  }, 120_000);

  afterAll(async () => {
    await dev?.stop();
    await fake?.close();
  });

  async function models(query: string): Promise<z.infer<typeof modelsSchema>["models"]> {
    const response = await fetch(`${dev.baseUrl}/admin/api/models${query}`);
    expect(response.status).toBe(200);
    return modelsSchema.parse(await response.json()).models;
  }

  it("without probe=1 no chat request reaches the model", async () => {
    fake.reset(() => textReply("ok"));
    const listed = await models(`?skill=${SKILL}`);
    expect(listed.map((entry) => entry.model).sort()).toEqual(["fake-a", "fake-b"]);
    expect(listed.every((entry) => entry.probe === undefined)).toBe(true);
    expect(fake.requests).toHaveLength(0);
  });

  it("with probe=1 exactly one one-token request per distinct model, each reported ok with its latency", async () => {
    fake.reset(() => textReply("ok"));
    const probed = await models(`?skill=${SKILL}&probe=1`);
    expect(probed.map((entry) => [entry.model, entry.probe?.ok]).sort()).toEqual([
      ["fake-a", true],
      ["fake-b", true],
    ]);
    expect(probed.every((entry) => (entry.probe?.latencyMs ?? -1) >= 0)).toBe(true);
    expect(fake.requests.map((request) => request.model).sort()).toEqual(["fake-a", "fake-b"]);
    expect(fake.requests.map((request) => request.max_tokens)).toEqual([1, 1]);
  });
});
