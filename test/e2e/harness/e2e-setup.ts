import { inject } from "vitest";
import { awaitHandoff } from "./setup-handoff";
import { usePrebuiltWorker } from "./worker-bundle";

// Runs in each e2e test worker before its files: their wrangler dev starts use the bundle the
// global setup builds (e2e-global-setup.ts) instead of bundling the Worker again each.
const bundle = inject("e2eWorkerBundle");
usePrebuiltWorker(bundle === undefined ? undefined : () => awaitHandoff<string>(bundle, "The Worker bundle"));
