import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot, runWrangler } from "../harness/wrangler-command";
import { startWranglerDev, type WranglerDev } from "../harness/wrangler-dev";
import { cliNode, runCliOnTerminal, runCliProcess } from "./cli-process";

const expert = (name: string, description: string) => ({
  name,
  description,
  provider: "openai-compatible",
  base_url: "http://127.0.0.1:9/v1",
  model: "unused",
});
const catalog = {
  skills: {
    default: { description: "General questions.", experts: [expert("ask", "Answers questions.")] },
    devops: { experts: [expert("deploy_help", "Helps with deploys.")] },
  },
};
const edited = {
  skills: {
    default: { description: "General questions.", experts: [expert("ask", "Answers questions briefly."), expert("summarize", "Summarizes.")] },
  },
};

describe("slipsnisse CLI against wrangler dev", () => {
  let dev: WranglerDev;
  let dir: string;
  const cli = (...args: string[]) => runCliProcess(args, { cwd: dir, env: { SLIPSNISSE_URL: dev.baseUrl } });
  const liveSkills = async () =>
    ((await (await fetch(`${dev.baseUrl}/admin/api/skills`)).json()) as { skills: Array<{ name: string }> }).skills.map(({ name }) => name);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "slipsnisse-cli-e2e-"));
    await writeFile(join(dir, "catalog.json"), JSON.stringify(catalog, null, 2));
    await writeFile(join(dir, "edited.json"), JSON.stringify(edited, null, 2));
    dev = await startWranglerDev();
  });
  afterAll(async () => {
    await dev?.stop();
  });

  it(`runs under ${cliNode} and validates offline with the same messages as the admin API`, async () => {
    expect(await cli("validate", "catalog.json")).toMatchObject({ code: 0, stdout: "catalog.json is valid: 2 skill(s): default, devops\n" });
    const broken = { skills: { Ops: { servers: { fs: { command: "npx" } }, experts: [{ name: "x y" }] } } };
    await writeFile(join(dir, "broken.json"), JSON.stringify(broken));
    const offline = await cli("validate", "broken.json");
    expect(offline.code).toBe(1);
    const api = await fetch(`${dev.baseUrl}/admin/api/validate`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(broken),
    });
    expect(api.status).toBe(400);
    const { problems } = (await api.json()) as { problems: Array<{ path: string; message: string; fix: string }> };
    expect(problems.length).toBeGreaterThanOrEqual(4);
    for (const problem of problems) expect(offline.stderr).toContain(`${problem.path} — ${problem.message}. Fix: ${problem.fix}`);
  });

  it("pushes a catalog and pulls back one that validates and pushes again unchanged", async () => {
    const pushed = await cli("push", "catalog.json", "--note", "first push");
    expect(pushed).toMatchObject({ code: 0 });
    expect(pushed.stdout).toContain("skill default: saved as version 1");
    expect(pushed.stdout).toContain("skill devops: saved as version 1");

    expect((await cli("pull", "pulled.json")).code).toBe(0);
    const pulled = JSON.parse(await readFile(join(dir, "pulled.json"), "utf8")) as { skills: Record<string, { experts: Array<{ budget: unknown }> }> };
    expect(Object.keys(pulled.skills)).toEqual(["default", "devops"]);
    expect(pulled.skills.default?.experts[0]?.budget).toMatchObject({ max_steps: 8 });
    expect((await cli("diff", "pulled.json", "--exit-code")).code).toBe(0);
    expect((await cli("push", "pulled.json")).stdout).toContain("skill default: unchanged (version 1)");
  });

  it("diffs per skill and per expert, then pushes the change and rolls it back", async () => {
    const diff = await cli("diff", "edited.json", "--exit-code");
    expect(diff.code).toBe(1);
    expect(diff.stdout).toBe(
      [
        "~ skill default",
        "    ~ expert ask",
        '        ~ description: "Answers questions." → "Answers questions briefly."',
        "    + expert summarize",
        "- skill devops (not in the file: push --prune stops serving it; its history stays)",
        "",
      ].join("\n"),
    );

    // A skill the file lacks is kept, and the output says so and how to remove it.
    const pushed = await cli("push", "edited.json");
    expect(pushed).toMatchObject({ code: 0 });
    expect(pushed.stdout).toBe("skill default: saved as version 2\nskill devops: kept (not in edited.json); to stop serving it, push again with --prune\n");
    expect(await liveSkills()).toEqual(["default", "devops"]);

    // On a terminal, --prune lists what it would remove and asks first; "n" pushes nothing.
    const declined = await runCliOnTerminal(["push", "edited.json", "--prune"], { cwd: dir, env: { SLIPSNISSE_URL: dev.baseUrl }, answer: "n\n" });
    expect(declined).toMatchObject({ code: 1, asked: true });
    expect(declined.output).toContain("1 live skill(s) not in edited.json will stop being served (their history stays): devops\nRemove devops? [y/N]");
    expect(declined.output).toContain("Nothing was pushed.");
    expect(await liveSkills()).toEqual(["default", "devops"]);

    // Without a terminal, --prune is the consent: the list comes before the removal.
    const pruned = await cli("push", "edited.json", "--prune");
    expect(pruned).toMatchObject({ code: 0 });
    expect(pruned.stdout.split("\n").slice(0, 3)).toEqual([
      "1 live skill(s) not in edited.json will stop being served (their history stays): devops",
      "skill default: unchanged (version 2)",
      expect.stringMatching(/^skill devops: removed \(not in edited.json\)/),
    ]);

    const versions = await cli("versions", "--skill", "default");
    expect(versions.stdout).toMatch(/\* v2 +\S+ +dev\n +v1 +\S+ +dev +first push\n/);

    expect(await cli("rollback", "1", "--skill", "default")).toMatchObject({ code: 0, stdout: "skill default: version 1 restored as version 3\n" });
    expect((await cli("diff", "edited.json")).stdout).toContain("+ expert summarize");
    // Version 3 holds version 1's content, so pushing the original skill alone changes nothing.
    expect((await cli("push", "catalog.json", "--skill", "default")).stdout).toBe("skill default: unchanged (version 3)\n");
    expect((await cli("diff", "catalog.json")).stdout).toBe("+ skill devops (new: 0 server(s); 1 expert(s) deploy_help)\n");
  });

  it("diffs a skill's prices and limits: a price raised 10× and runs_per_day cut to 1 are differences, not silence", async () => {
    const priced = (inputPrice: number, runsPerDay: number) => ({
      skills: {
        default: {
          description: "General questions.",
          limits: { per_user: { runs_per_day: runsPerDay } },
          pricing: { "openai-compatible": { unused: { input_per_million: inputPrice, output_per_million: 1 } } },
          experts: [expert("ask", "Answers questions.")],
        },
      },
    });
    await writeFile(join(dir, "priced.json"), JSON.stringify(priced(0.5, 200)));
    await writeFile(join(dir, "pricier.json"), JSON.stringify(priced(5, 1)));
    expect((await cli("push", "priced.json")).stdout).toContain("skill default: saved as version");
    expect(await cli("diff", "priced.json", "--exit-code")).toMatchObject({ code: 0, stdout: "No differences: priced.json matches the live catalog.\n" });

    expect(await cli("diff", "pricier.json", "--exit-code")).toMatchObject({
      code: 1,
      stdout: ["~ skill default", "    ~ limits.per_user.runs_per_day: 200 → 1", "    ~ pricing.openai-compatible.unused.input_per_million: 0.5 → 5", ""].join(
        "\n",
      ),
    });
  });

  it("reports an admin API refusal with the problems and a non-zero exit", async () => {
    const rollback = await cli("rollback", "99", "--skill", "default");
    expect(rollback.code).toBe(1);
    expect(rollback.stderr).toContain('Skill "default" has no version 99.');
    expect(rollback.stderr).toContain("fix: List the versions");
    const unreachable = await runCliProcess(["pull"], { cwd: dir, env: { SLIPSNISSE_URL: "http://127.0.0.1:9" } });
    expect(unreachable).toMatchObject({ code: 1, stderr: expect.stringContaining("Cannot reach the Worker at http://127.0.0.1:9.") });
  });
});

describe("slipsnisse tenant add", () => {
  it("writes a wrangler.toml that `wrangler deploy --dry-run --env demo` accepts with every binding", async () => {
    const dir = await mkdtemp(join(tmpdir(), "slipsnisse-tenant-"));
    await writeFile(join(dir, "wrangler.toml"), await readFile(join(repoRoot, "wrangler.toml"), "utf8"));
    const ids = ["--db-id", "0f1e2d3c-4b5a-4697-8899-aabbccddeeff", "--cache-kv-id", "c".repeat(32), "--oauth-kv-id", "d".repeat(32)];
    const added = await runCliProcess(["tenant", "add", "demo", ...ids], { cwd: dir });
    expect(added.code, added.stderr).toBe(0);
    const config = join(dir, "wrangler.toml");
    const deploy = await runWrangler([
      "deploy",
      "--dry-run",
      "--env",
      "demo",
      "--outdir",
      join(dir, "out"),
      "--config",
      config,
      "--script",
      join(repoRoot, "src/index.ts"),
    ]);
    expect(deploy.code, deploy.output).toBe(0);
    for (const binding of [
      "env.EXPERT_SESSION (ExpertSession)",
      "env.LEGACY_SSE (LegacySseSession)",
      "env.LIVE_FEED (LiveRunFeed)",
      "env.SKILL_LIMITER (SkillLimiter)",
      "env.CACHE",
      "env.OAUTH_KV",
      "env.DB (slipsnisse-demo)",
      "env.SELF (slipsnisse-demo)",
      "env.AI",
      'env.TENANT ("demo")',
    ]) {
      expect(deploy.output).toContain(binding);
    }
    expect(deploy.output).not.toMatch(/WARNING|not inherited|exists at the top level/i);
  });
});
