import { inject } from "vitest";
import { usePrebuiltWorker } from "./worker-bundle";

// Runs in each e2e test worker before its files: their wrangler dev starts use the bundle the
// global setup built (e2e-global-setup.ts) instead of bundling the Worker again each.
usePrebuiltWorker(inject("e2eWorkerBundle"));
