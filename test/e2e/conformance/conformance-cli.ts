import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { spawnBounded } from "../harness/spawn-bounded";

/** The conformance suite's CLI, run under this Node (npx's Node 24), not the system Node 20. */
const conformanceBin = fileURLToPath(new URL("../../../node_modules/@modelcontextprotocol/conformance/dist/index.js", import.meta.url));

export const checkSchema = z.looseObject({
  id: z.string(),
  name: z.string().optional(),
  status: z.string(),
  description: z.string().optional(),
  errorMessage: z.string().optional(),
});
export type ConformanceCheck = z.infer<typeof checkSchema> & { scenario: string };

export interface ConformanceRun {
  code: number | null;
  output: string;
  checks: ConformanceCheck[];
  elapsedMs: number;
}

/** Runs `conformance server` to completion (bounded), then reads every scenario's checks.json. */
export async function runConformance(args: readonly string[], outputDir: string, timeoutMs: number): Promise<ConformanceRun> {
  const started = performance.now();
  const { code, output } = await spawnBounded(process.execPath, [conformanceBin, "server", ...args, "--output-dir", outputDir], {
    env: { ...process.env, NO_COLOR: "1" },
    timeoutMs,
    label: `conformance ${args.join(" ")}`,
  });
  return { code, output, checks: await readChecks(outputDir), elapsedMs: performance.now() - started };
}

async function readChecks(outputDir: string): Promise<ConformanceCheck[]> {
  const checks: ConformanceCheck[] = [];
  const entries = await readdir(outputDir, { withFileTypes: true, recursive: true });
  for (const entry of entries) {
    if (!entry.isFile() || entry.name !== "checks.json") continue;
    // Each scenario writes to `server-<scenario>-<ISO timestamp>/checks.json`.
    const dir = entry.parentPath.split("/").at(-1) ?? "";
    const scenario = dir.replace(/^server-/, "").replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, "");
    const parsed = z.array(checkSchema).parse(JSON.parse(await readFile(join(entry.parentPath, entry.name), "utf8")));
    checks.push(...parsed.map((check) => ({ ...check, scenario })));
  }
  return checks;
}
