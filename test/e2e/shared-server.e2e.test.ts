import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../support/wait-for";
import { startFakeOpenAI, textReply, type FakeOpenAIServer } from "./harness/fake-openai-server";
import { connectMcpClient, resultText } from "./harness/mcp-clients";
import { isLiveProcess, listProcessGroup } from "./harness/process-group";
import { pushSharedSkill, type SharedSkill, sharedWranglerDev } from "./harness/shared-wrangler-dev";

/**
 * What files sharing the global setup's `wrangler dev` rely on: a skill pushed under one name
 * leaves the server's other skills alone and is served apart from them, a file's `stop()` leaves
 * the server running for the next file, and `logs()` holds what the server printed since the
 * file attached.
 */
describe("the shared wrangler dev", () => {
  let fake: FakeOpenAIServer;
  let one: SharedSkill;
  let two: SharedSkill;

  beforeAll(async () => {
    fake = await startFakeOpenAI({ script: (request) => textReply(`model ${request.model} answered`) });
    const dev = await sharedWranglerDev();
    const expert = (name: string, model: string) => ({ name, description: "Answers.", provider: "openai-compatible" as const, base_url: fake.baseURL, model });
    one = await pushSharedSkill(dev, "shared-server-one", { experts: [expert("ask_one", "fake-one")] });
    two = await pushSharedSkill(dev, "shared-server-two", { experts: [expert("ask_two", "fake-two")] });
  });
  afterAll(() => fake?.close());

  it("serves each pushed skill at its own endpoint with only its own experts", async () => {
    for (const [skill, expert, model] of [
      [one, "ask_one", "fake-one"],
      [two, "ask_two", "fake-two"],
    ] as const) {
      const client = await connectMcpClient("v2-2025", skill.mcpUrl);
      try {
        expect((await client.listTools()).map((tool) => tool.name)).toEqual([expert]);
        expect(resultText(await client.callTool(expert, { query: "hi" }))).toContain(`model ${model} answered`);
      } finally {
        await client.close();
      }
    }
  });

  it("pushing one skill again keeps the other skills", async () => {
    const dev = await sharedWranglerDev();
    await pushSharedSkill(dev, one.skill, {
      experts: [{ name: "ask_one_again", description: "Answers.", provider: "openai-compatible", base_url: fake.baseURL, model: "fake-one" }],
    });
    const response = await fetch(`${dev.baseUrl}/admin/api/skills`);
    const { skills } = (await response.json()) as { skills: Array<{ name: string }> };
    expect(skills.map((skill) => skill.name)).toEqual(expect.arrayContaining([one.skill, two.skill]));
  });

  it("a file's stop() leaves the server running, and logs() starts where the file attached", async () => {
    const earlier = await sharedWranglerDev();
    const client = await connectMcpClient("v2-2025", two.mcpUrl);
    try {
      await client.callTool("ask_two", { query: "logged" });
    } finally {
      await client.close();
    }
    // wrangler's output reaches the log file through a pipe: wait for the run's closing line
    // (written with the run index flush, about a second after the run).
    const finished = (logs: string) =>
      logs.split("\n").some((line) => line.includes('"message":"expert runs finished"') && line.includes('"expert":"ask_two"'));
    await waitFor("the run's closing log line", () => (finished(earlier.logs()) ? true : undefined), 10_000, 100);
    const later = await sharedWranglerDev();
    expect(finished(later.logs())).toBe(false);

    await earlier.stop();
    expect(listProcessGroup(earlier.pgid).length).toBeGreaterThanOrEqual(2);
    expect(isLiveProcess(earlier.pgid)).toBe(true);
    expect(await (await fetch(`${later.baseUrl}/healthz`)).json()).toEqual({ ok: true });
  });
});
