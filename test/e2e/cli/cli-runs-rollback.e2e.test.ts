import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EchoExpertStack, fakeModelExpert, startEchoExpertStack } from "../harness/echo-expert-stack";
import { textReply, toolCallsReply, toolResultMessages } from "../harness/fake-openai-server";
import { connectMcpClient } from "../harness/mcp-clients";
import { pushSharedSkill, sharedWranglerDev } from "../harness/shared-wrangler-dev";
import { waitFor } from "../../support/wait-for";
import { runCliOnTerminal, runCliProcess } from "./cli-process";

const SKILL = "cli-runs-rollback";

/**
 * `runs` and `rollback` as real processes against the shared `wrangler dev`, on a skill of this
 * file's own: a run whose model reaches for a tool its expert lacks, and a history to roll back.
 */
describe("slipsnisse runs and rollback against wrangler dev", () => {
  let stack: EchoExpertStack;
  let dir: string;
  const cli = (...args: string[]) => runCliProcess(args, { cwd: dir, env: { SLIPSNISSE_URL: stack.dev.baseUrl } });
  const expert = (description: string) =>
    fakeModelExpert(stack.fake, {
      name: "ask",
      description,
      internal_tools: { fx: ["echo"] },
      budget: { max_steps: 4, timeout_ms: 30_000, max_output_tokens: 512, max_tool_calls: 4, max_tool_result_bytes: 4_096 },
    });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "slipsnisse-cli-runs-"));
    stack = await startEchoExpertStack({
      tag: SKILL,
      onServer: { dev: await sharedWranglerDev(), skill: SKILL },
      experts: (fake) => [fakeModelExpert(fake, { name: "ask", description: "Answers.", internal_tools: { fx: ["echo"] } })],
    });
  });
  afterAll(() => stack?.stop());

  it("lists a run with refused tool calls marked as the dashboard marks it, and numbers its steps from 1", async () => {
    // One forbidden call and one allowed echo, then an answer: two steps, one refused call.
    stack.fake.reset((request) =>
      toolResultMessages(request).length === 0
        ? toolCallsReply({ name: "fx__erase", arguments: { record: "r1" } }, { name: "fx__echo", arguments: { text: "hi" } })
        : textReply("Echoed; erasing is not mine to do."),
    );
    const client = await connectMcpClient("v2-2025", stack.mcpUrl);
    try {
      expect((await client.callTool("ask", { query: "erase r1, echo hi" })).isError ?? false).toBe(false);
    } finally {
      await client.close();
    }

    // The run index is written after the answer (the session's outbox): wait until it lists the run.
    const listed = await waitFor(
      "the run in `runs --skill`",
      async () => {
        const answer = await cli("runs", "--skill", SKILL);
        return answer.stdout.includes(`${SKILL}/ask`) ? answer : undefined;
      },
      20_000,
      250,
    );
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`ok ⚠ 1 refused +${SKILL}/ask `));
    const runId = /([0-9a-f-]{36})\n/.exec(listed.stdout)?.[1];
    expect(runId).toBeDefined();

    const trace = await cli("runs", String(runId));
    expect(trace.code, trace.stderr).toBe(0);
    const steps = trace.stdout.split("\n").filter((line) => line.startsWith("step "));
    expect(steps.map((line) => line.split(/\s+/)[1])).toEqual(["1", "2"]);
    expect(trace.stdout).toMatch(/step 1 .*\n {2}refused +fx__erase/);
  });

  it("rollback --dry-run shows the diff the rollback would apply and restores nothing", async () => {
    const first = await pushSharedSkill(stack.dev, SKILL, {
      servers: { fx: { url: `${stack.fxBase}/mcp`, transport: "streamable-http" } },
      experts: [expert("First wording.")],
    });
    expect(first.skill).toBe(SKILL);
    const versions = async () => (await (await fetch(`${stack.dev.baseUrl}/admin/api/skills/${SKILL}`)).json()) as { version: number };
    const older = (await versions()).version;
    await pushSharedSkill(stack.dev, SKILL, {
      servers: { fx: { url: `${stack.fxBase}/mcp`, transport: "streamable-http" } },
      experts: [expert("Second wording.")],
    });
    const live = (await versions()).version;
    expect(live).toBe(older + 1);

    const preview = await cli("rollback", String(older), "--skill", SKILL, "--dry-run");
    expect(preview.code, preview.stderr).toBe(0);
    expect(preview.stdout).toBe(
      [
        `Restoring version ${older} of ${SKILL} would change:`,
        `~ skill ${SKILL}`,
        "    ~ expert ask",
        '        ~ description: "Second wording." → "First wording."',
        "Dry run: nothing was restored.",
        "",
      ].join("\n"),
    );
    expect((await versions()).version).toBe(live);

    // On a terminal the same preview comes first, and "n" restores nothing.
    const declined = await runCliOnTerminal(["rollback", String(older), "--skill", SKILL], {
      cwd: dir,
      env: { SLIPSNISSE_URL: stack.dev.baseUrl },
      answer: "n\n",
    });
    expect(declined).toMatchObject({ code: 1, asked: true });
    expect(declined.output).toContain(`        ~ description: "Second wording." → "First wording."\nRestore version ${older} of ${SKILL}? [y/N]`);
    expect(declined.output).toContain("Nothing was restored.");
    expect((await versions()).version).toBe(live);

    const same = await cli("rollback", String(live), "--skill", SKILL, "--dry-run");
    expect(same.stdout).toContain(`Restoring version ${live} of ${SKILL} changes nothing: it matches the live version.`);
    expect(await cli("rollback", String(older), "--skill", SKILL)).toMatchObject({
      code: 0,
      stdout: `skill ${SKILL}: version ${older} restored as version ${live + 1}\n`,
    });
  });
});
