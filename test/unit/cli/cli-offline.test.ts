import { mkdtemp, readdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runCli } from "./cli-test-io";

const repoToml = fileURLToPath(new URL("../../../wrangler.toml", import.meta.url));

async function tempDir(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "slipsnisse-cli-"));
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  return dir;
}

/** Binding names of a wrangler.toml section: `binding = "X"` and Durable Object `name = "X"`. */
function bindingNames(toml: string): string[] {
  const names = [...toml.matchAll(/^\s*binding\s*=\s*"([A-Z_]+)"/gm)].map((m) => m[1]);
  const objects = [...toml.matchAll(/durable_objects\.bindings\]\]\s*\nname\s*=\s*"([A-Z_]+)"/g)].map((m) => m[1]);
  return [...names, ...objects].filter((name): name is string => name !== undefined).sort();
}

describe("slipsnisse validate (offline)", () => {
  it("accepts a valid catalog with exit code 0", async () => {
    const cwd = await tempDir({ "catalog.json": JSON.stringify({ skills: { default: { experts: [{ name: "ask", description: "d" }] } } }) });
    expect(await runCli(["validate", "catalog.json"], { cwd })).toMatchObject({ code: 0, stdout: "catalog.json is valid: 1 skill(s): default\n" });
  });

  it("lists every problem by path with its fix and exits 1", async () => {
    const cwd = await tempDir({ "catalog.json": JSON.stringify({ skills: { default: { experts: [{ name: "a b" }] } } }) });
    const run = await runCli(["validate", "catalog.json"], { cwd });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("catalog.json: 2 problem(s):");
    expect(run.stderr).toContain("$.skills.default.experts[0].description — `description` is required. Fix: add it (a string)");
    expect(run.stderr).toContain("$.skills.default.experts[0].name — expert name `a b`");
  });

  it("refuses a model base_url that is not a public http(s) endpoint, at its path", async () => {
    const model = (base_url: string) => ({ name: "ask", description: "d", provider: "openai-compatible", model: "m", base_url });
    const cwd = await tempDir({
      "catalog.json": JSON.stringify({
        skills: { default: { experts: [model("ftp://models.example.com/v1"), { ...model("javascript:alert(1)"), name: "ask2" }] } },
      }),
    });
    const run = await runCli(["validate", "catalog.json"], { cwd });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("$.skills.default.experts[0].base_url — the model endpoint `base_url` uses `ftp:`");
    expect(run.stderr).toContain("$.skills.default.experts[1].base_url — the model endpoint `base_url` uses `javascript:`");
  });

  it("explains a missing file and broken JSON in plain words", async () => {
    const cwd = await tempDir({ "broken.json": '{ "skills": { , } }' });
    expect(await runCli(["validate", "nope.json"], { cwd })).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/^error: There is no file .*nope\.json\.\nfix: /),
    });
    expect(await runCli(["validate", "broken.json"], { cwd })).toMatchObject({ code: 1, stderr: expect.stringContaining("is not valid JSON") });
  });
});

describe("usage mistakes exit 2 with a fix", () => {
  it("refuses unknown commands, unknown options, a missing URL and a bad version", async () => {
    expect((await runCli(["frobnicate"])).code).toBe(2);
    expect((await runCli(["pull", "--bogus"])).code).toBe(2);
    expect(await runCli(["pull"])).toMatchObject({ code: 2, stderr: expect.stringContaining("SLIPSNISSE_URL") });
    expect((await runCli(["rollback", "x", "--url", "http://127.0.0.1:1"])).code).toBe(2);
    expect((await runCli(["--help"])).stdout).toContain("tenant add <name>");
  });
});

const IDS = ["--db-id", "0f1e2d3c-4b5a-4697-8899-aabbccddeeff", "--cache-kv-id", "c".repeat(32), "--oauth-kv-id", "d".repeat(32)];

describe("slipsnisse tenant add --dry-run", () => {
  it("writes nothing: prints the commands and the [env.<name>] block, which repeats every top-level binding with TENANT and its own worker name", async () => {
    const original = await readFile(repoToml, "utf8");
    const cwd = await tempDir({ "wrangler.toml": original });
    const run = await runCli(["tenant", "add", "acme", "--dry-run"], { cwd });
    expect(run.code).toBe(0);
    expect(await readFile(join(cwd, "wrangler.toml"), "utf8")).toBe(original);
    expect(run.stdout).toContain("Dry run: nothing is created and nothing is written.");
    expect(run.stdout).toContain("npx wrangler d1 create slipsnisse-acme");
    expect(run.stdout).toContain("WRANGLER_SEND_METRICS=false WRANGLER_SEND_ERROR_REPORTS=false npx wrangler deploy --env acme");
    expect(run.stdout).toContain("npx wrangler secret put ADMIN_TOKEN --env acme");
    const block = run.stdout.slice(run.stdout.indexOf('# Tenant "acme"'), run.stdout.indexOf('\nTenant "acme" is in'));
    expect(bindingNames(original)).toEqual([
      "AI",
      "CACHE",
      "DB",
      "EXPERT_SESSION",
      "LEGACY_SSE",
      "LIVE_FEED",
      "LOADER",
      "OAUTH_KV",
      "SELF",
      "SKILL_LIMITER",
      "USER_CONNECTIONS",
    ]);
    expect(bindingNames(block)).toEqual(bindingNames(original));
    expect(block).toContain('[env.acme]\nname = "slipsnisse-acme"');
    expect(block).toMatch(/\[\[env\.acme\.services\]\]\nbinding = "SELF"\nservice = "slipsnisse-acme"/);
    expect(block).toContain('TENANT = "acme"');
    expect(block).not.toContain('TENANT = "default"');
  });

  it("previews, then the real run with existing resources' ids appends the block in one rename and ends with the deploy step", async () => {
    const original = await readFile(repoToml, "utf8");
    const cwd = await tempDir({ "wrangler.toml": original });
    expect((await runCli(["tenant", "add", "acme", "--dry-run", ...IDS], { cwd })).code).toBe(0);
    expect(await readFile(join(cwd, "wrangler.toml"), "utf8")).toBe(original);
    const run = await runCli(["tenant", "add", "acme", ...IDS], { cwd });
    expect(run).toMatchObject({ code: 0, stderr: "" });
    const written = await readFile(join(cwd, "wrangler.toml"), "utf8");
    expect(written.startsWith(original.trimEnd())).toBe(true);
    const block = written.slice(original.trimEnd().length);
    expect(bindingNames(block)).toEqual(bindingNames(original));
    expect(block).toContain('database_id = "0f1e2d3c-4b5a-4697-8899-aabbccddeeff"');
    expect(block).toContain(`id = "${"c".repeat(32)}"`);
    expect(block).not.toContain("PLACEHOLDER");
    expect(run.stdout.trimEnd().split("\n").at(-2)).toBe("       WRANGLER_SEND_METRICS=false WRANGLER_SEND_ERROR_REPORTS=false npx wrangler deploy --env acme");
    // No temporary file is left beside it.
    expect(await readdir(cwd)).toEqual(["wrangler.toml"]);
    expect(await runCli(["tenant", "add", "acme", ...IDS], { cwd })).toMatchObject({ code: 1, stderr: expect.stringContaining("already has [env.acme]") });
  });

  it("refuses ids given in part or of the wrong kind, writing nothing", async () => {
    const cwd = await tempDir({ "wrangler.toml": 'name = "slipsnisse"\n' });
    expect(await runCli(["tenant", "add", "acme", "--db-id", "0f1e2d3c-4b5a-4697-8899-aabbccddeeff"], { cwd })).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("--cache-kv-id and --oauth-kv-id missing"),
    });
    expect(await runCli(["tenant", "add", "acme", ...IDS.slice(0, 5), "nope"], { cwd })).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--oauth-kv-id "nope" is not an id of that kind'),
    });
    expect(await readFile(join(cwd, "wrangler.toml"), "utf8")).toBe('name = "slipsnisse"\n');
  });

  it("refuses an existing tenant, a bad name and a missing wrangler.toml without writing", async () => {
    const cwd = await tempDir({ "wrangler.toml": 'name = "slipsnisse"\n[env.acme]\nname = "x"\n' });
    expect(await runCli(["tenant", "add", "acme", "--dry-run"], { cwd })).toMatchObject({ code: 1, stderr: expect.stringContaining("already has [env.acme]") });
    expect((await runCli(["tenant", "add", "Acme_Corp", "--dry-run"], { cwd })).code).toBe(2);
    expect(await readFile(join(cwd, "wrangler.toml"), "utf8")).toBe('name = "slipsnisse"\n[env.acme]\nname = "x"\n');
    const empty = await tempDir({});
    expect(await runCli(["tenant", "add", "acme", "--dry-run"], { cwd: empty })).toMatchObject({ code: 1, stderr: expect.stringContaining("--config") });
  });
});
