import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFixtureStats } from "../../fixtures/fixture-stats-client";
import { type EchoExpertStack, fakeModelExpert, startEchoExpertStack } from "../harness/echo-expert-stack";
import { offeredToolNames, textReply, toolCallsReply, toolResultMessages, type ScriptedReply } from "../harness/fake-openai-server";
import { chromiumSkipReason, sharedChromium, loopbackOnlyContext, saveScreenshot } from "../harness/chromium-browser";
import { runCliProcess } from "./cli-process";

/**
 * `npx slipsnisse eval` as a real process against `wrangler dev`, whose expert calls the scripted
 * fake model: the model id in each request picks the "model" that answers. `good` and `lite`
 * answer well (lite is priced lower), `rogue` (the cheapest) reaches for a destructive tool the
 * eval must not see called, `wordy` (slow too) spends far more tokens than allowed.
 */
const MODELS: Record<string, (toolResults: number) => ScriptedReply> = {
  good: (results) => (results === 0 ? toolCallsReply({ name: "fx__echo", arguments: { text: "budget" } }) : textReply("Budgets bound loops.")),
  lite: (results) => (results === 0 ? toolCallsReply({ name: "fx__echo", arguments: { text: "budget" } }) : textReply("Budgets bound loops.")),
  rogue: (results) => (results === 0 ? toolCallsReply({ name: "fx__erase", arguments: { record: "r1" } }) : textReply("Erased it; budgets bound loops.")),
  wordy: () => ({
    kind: "text",
    text: `Well, ${"budgets are a large topic, ".repeat(40)}in short they bound loops.`,
    usage: { prompt_tokens: 50, completion_tokens: 900 },
    delayMs: 150,
  }),
};

describe("slipsnisse eval against wrangler dev", () => {
  let stack: EchoExpertStack;
  let dir: string;
  const cli = (...args: string[]) => runCliProcess(args, { cwd: dir, env: { SLIPSNISSE_URL: stack.dev.baseUrl }, timeoutMs: 120_000 });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "slipsnisse-eval-e2e-"));
    stack = await startEchoExpertStack({
      tag: "evals",
      skill: {
        pricing: {
          "openai-compatible": {
            good: { input_per_million: 1, output_per_million: 4 },
            lite: { input_per_million: 0.1, output_per_million: 0.4 },
            rogue: { input_per_million: 0.01, output_per_million: 0.01 },
            wordy: { input_per_million: 0.05, output_per_million: 0.2 },
          },
        },
      },
      experts: (fake) => [
        fakeModelExpert(fake, {
          name: "ask",
          description: "Answers from the fixture server.",
          model: "good",
          internal_tools: { fx: ["echo", "erase"] },
          budget: { max_steps: 4, timeout_ms: 30_000, max_output_tokens: 1_024, max_tool_calls: 4, max_tool_result_bytes: 4_096 },
          evals: [
            {
              name: "bounds",
              arguments: { query: "What bounds loops?" },
              assert: [
                { type: "contains", value: "bound loops" },
                { type: "calls_tool", tool: "fx__echo" },
                { type: "not_calls_tool", tool: "fx__erase" },
                { type: "max_tokens", value: 500 },
              ],
            },
            {
              name: "brief",
              arguments: { query: "Briefly?" },
              assert: [
                { type: "max_steps", value: 3 },
                { type: "max_cost", value: 0.001 },
              ],
            },
          ],
        }),
      ],
    });
    stack.fake.reset((request) => {
      const model = MODELS[request.model];
      if (!model) return { kind: "error", status: 404, message: `fake model: no model ${request.model}` };
      // In code mode (`--mode code`) the one tool offered is run_script: the same echo, as a script.
      if (offeredToolNames(request).includes("run_script") && toolResultMessages(request).length === 0) {
        return toolCallsReply({ name: "run_script", arguments: { code: 'await tools.fx__echo({ text: "budget" }); return "bound loops";' } });
      }
      return model(toolResultMessages(request).length);
    });
  }, 120_000);
  afterAll(() => stack?.stop());

  it("ranks the models, prints each failure with its trace, and names the cheapest that passes every eval", async () => {
    const erasesBefore = (await readFixtureStats(stack.fxBase)).calls.erase ?? 0;
    const models = ["good", "lite", "rogue", "wordy"].flatMap((model) => ["--model", `openai-compatible:${model}`]);
    const result = await cli("eval", "--skill", "default", ...models);
    expect(result.stderr).toContain("Running the evals of default/ask");
    expect(result.code, result.stdout + result.stderr).toBe(0);
    const out = result.stdout;
    expect(out).toContain("default/ask (catalog version 1)");
    expect(out).toMatch(/openai-compatible:good\s+2\/2 passed {2}tokens 60 \(40 in, 20 out\) {2}cost 0\.000120 {2}p50 \d+ ms {2}p95 \d+ ms/);
    expect(out).toMatch(/openai-compatible:lite\s+2\/2 passed/);
    expect(out).toMatch(/openai-compatible:rogue\s+1\/2 passed/);
    expect(out).toMatch(/openai-compatible:wordy\s+1\/2 passed/);
    expect(out).toContain("✗ bounds: calls_tool: the run never called a tool matching `fx__echo` (called: fx__erase)");
    expect(out).toContain("✗ bounds: not_calls_tool: the run called `fx__erase` (declined), which matches the forbidden `fx__erase`");
    expect(out).toContain("✗ bounds: max_tokens: the run used 950 tokens, more than 500");
    expect(out).toMatch(new RegExp(`trace ${stack.dev.baseUrl.replace(/[.]/g, "\\.")}/admin/runs/[0-9a-f-]{36}`));
    const ranking = out.slice(out.indexOf("ranking"));
    expect(
      ranking
        .split("\n")
        .slice(1, 5)
        .map((line) => line.trim().split(/\s+/)[1]),
    ).toEqual(["openai-compatible:lite", "openai-compatible:good", "openai-compatible:rogue", "openai-compatible:wordy"]);
    expect(out).toContain("cheapest that passes every eval: openai-compatible:lite (0.000012)");
    expect(out).toContain(`history: ${stack.dev.baseUrl}/admin/catalog/default/experts/ask/evals`);
    // The eval declined the rogue model's erase: it was never executed.
    expect((await readFixtureStats(stack.fxBase)).calls.erase ?? 0).toBe(erasesBefore);
  });

  it("ranks the tool loop against code mode of the same expert with --mode", async () => {
    const result = await cli("eval", "--skill", "default", "--model", "openai-compatible:lite", "--mode", "synthesize", "--mode", "code", "--eval", "bounds");
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toMatch(/openai-compatible:lite \(synthesize\)\s+1\/1 passed/);
    expect(result.stdout).toMatch(/openai-compatible:lite \(code\)\s+1\/1 passed/);
    expect(result.stdout).toContain("ranking");
  });

  it.skipIf(chromiumSkipReason !== undefined)("shows the results on the expert's evals page in Chromium, each failure linking to its run", async () => {
    const browser = await sharedChromium();
    try {
      const page = await (await loopbackOnlyContext(browser)).newPage();
      // The loopback admin of `wrangler dev` without OAuth opens the dashboard without signing in.
      // The report is kept for this page after the eval command's answer: look until it is there.
      const latest = page.getByRole("region", { name: "Latest, catalog version 1" });
      await expect
        .poll(
          async () => {
            await page.goto(`${stack.dev.baseUrl}/admin/catalog/default/experts/ask/evals`);
            return latest.getByRole("row", { name: /openai-compatible:rogue 1\/2/ }).count();
          },
          { timeout: 15_000, interval: 250 },
        )
        .toBe(1);
      await expect(latest.getByRole("row", { name: /openai-compatible:lite 2\/2/ }).count()).resolves.toBe(1);
      await expect(latest.getByRole("row", { name: /openai-compatible:rogue 1\/2/ }).count()).resolves.toBe(1);
      await expect(latest.getByText("✗ bounds: the run never called a tool matching `fx__echo` (called: fx__erase)", { exact: false }).count()).resolves.toBe(
        1,
      );
      await saveScreenshot(page, "dashboard-expert-evals");
      await latest.getByRole("link", { name: "trace" }).first().click();
      await page.waitForURL(/\/admin\/runs\/[0-9a-f-]{36}$/);
      // The run page reads the run index, which the session writes about a second after the run
      // ends (later on a loaded machine): until then it says "No such run", so look again.
      await expect
        .poll(
          async () => {
            const shown = await page.getByText("eval:bounds", { exact: false }).count();
            if (shown === 0) await page.reload();
            return shown;
          },
          { timeout: 20_000, interval: 500 },
        )
        .toBeGreaterThan(0);
    } finally {
      await browser.close();
    }
  });

  it("with a threshold the cheapest model reaching it wins; none reaching it exits 1", async () => {
    const half = await cli(
      "eval",
      "--skill",
      "default",
      "--expert",
      "ask",
      "--model",
      "openai-compatible:rogue",
      "--model",
      "openai-compatible:lite",
      "--threshold",
      "50%",
    );
    expect(half.code).toBe(0);
    expect(half.stdout).toContain("cheapest that passes at least 50% of the evals: openai-compatible:rogue");
    const strict = await cli("eval", "--skill", "default", "--model", "openai-compatible:wordy");
    expect(strict.code).toBe(1);
    expect(strict.stdout).toContain("no model passes every eval");
  });

  it("stops at the cost budget with a clear message", async () => {
    const result = await cli("eval", "--skill", "default", "--model", "openai-compatible:good", "--max-cost", "0.00001", "--concurrency", "1");
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/good\s+1\/2 passed, 1 not run/);
    expect(result.stdout).toContain("stopped: The eval budget of 0.00001 was reached");
  });

  it("push --require-evals saves nothing when a changed expert fails its evals, and saves once they pass", async () => {
    expect((await cli("pull", "live.json")).code).toBe(0);
    const live = JSON.parse(await readFile(join(dir, "live.json"), "utf8")) as { skills: { default: { experts: Array<{ model: string }> } } };
    const withModel = async (model: string) => {
      const [first] = live.skills.default.experts;
      if (first) first.model = model;
      await writeFile(join(dir, "candidate.json"), JSON.stringify(live));
    };
    await withModel("wordy");
    const refused = await cli("push", "candidate.json", "--require-evals");
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("The Worker refused it (HTTP 409), 1 problem(s)");
    expect(refused.stderr).toMatch(/\$\.skills\.default\.experts\[0\]\.evals\[0\] — eval `bounds` of expert `ask` fails: .*more than 500/);
    const history = (await cli("versions", "--skill", "default")).stdout;
    expect(history).toMatch(/^ {2}\* v1 /m);
    expect(history).not.toContain(" v2 ");
    await withModel("lite");
    const saved = await cli("push", "candidate.json", "--require-evals");
    expect(saved.stdout + saved.stderr).toContain("skill default: saved as version 2");
    expect(saved.code).toBe(0);
  });
});
