#!/usr/bin/env node
// `npm run bench`: runs the benchmark under npm's Node 24, which runs TypeScript natively.
// `npm run bench:dashboard`: the dashboard pages with 10,000 runs in the index, on their own.
// Shared test fixtures use parameter properties, which plain type stripping refuses, so the
// bench re-runs itself once with --experimental-transform-types. The project's .ts files import
// each other without extensions (bundler resolution, as tsc and vitest expect), so a resolve
// hook adds `.ts` where Node finds none.
import { spawnSync } from "node:child_process";
import { registerHooks } from "node:module";
import { fileURLToPath } from "node:url";

if (!process.execArgv.includes("--experimental-transform-types")) {
  const flags = ["--experimental-transform-types", "--disable-warning=ExperimentalWarning"];
  const self = fileURLToPath(import.meta.url);
  const child = spawnSync(process.execPath, [...flags, self, ...process.argv.slice(2)], { stdio: "inherit" });
  process.exit(child.status ?? 1);
}

registerHooks({
  resolve(specifier, context, nextResolve) {
    try {
      return nextResolve(specifier, context);
    } catch (error) {
      const relative = specifier.startsWith("./") || specifier.startsWith("../");
      if (!relative || error?.code !== "ERR_MODULE_NOT_FOUND") throw error;
      return nextResolve(`${specifier}.ts`, context);
    }
  },
});

const args = process.argv.slice(2);
if (args[0] === "--dashboard") {
  const { runDashboardBench } = await import("./dashboard-pages-bench.ts");
  await runDashboardBench();
} else {
  const { runBenchmark } = await import("./bench-main.ts");
  await runBenchmark(args);
}
