#!/usr/bin/env node
// `npm run bench`: runs the benchmark under npm's Node 24, which strips TypeScript types
// natively. The project's .ts files import each other without extensions (bundler
// resolution, as tsc and vitest expect), so a resolve hook adds `.ts` where Node finds none.
import { registerHooks } from "node:module";

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

const { runBenchmark } = await import("./bench-main.ts");
await runBenchmark(process.argv.slice(2));
