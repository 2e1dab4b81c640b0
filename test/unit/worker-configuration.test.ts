import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const repo = fileURLToPath(new URL("../../", import.meta.url));

/**
 * worker-configuration.d.ts is committed (Cloudflare's convention: the types follow wrangler.toml,
 * the compatibility date and flags) and checked here, so CI fails when wrangler.toml changed
 * without `npm run types`. See docs/generated-files.md.
 */
describe("worker-configuration.d.ts", () => {
  it("is what `npm run types` generates from wrangler.toml (`wrangler types --check`)", async () => {
    const run = await promisify(execFile)("npm", ["run", "--silent", "types", "--", "--check"], { cwd: repo, timeout: 60_000 }).then(
      ({ stdout, stderr }) => ({ code: 0, output: `${stdout}${stderr}` }),
      (error: { code?: number; stdout?: string; stderr?: string }) => ({ code: error.code ?? -1, output: `${error.stdout ?? ""}${error.stderr ?? ""}` }),
    );
    expect(run.code, `stale: run \`npm run types\` and commit worker-configuration.d.ts\n${run.output}`).toBe(0);
  }, 60_000);
});
