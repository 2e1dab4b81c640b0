import { readFileSync, statSync } from "node:fs";
import { inject } from "vitest";
import type { CatalogInput } from "../../../src/catalog/catalog-schema";
import { awaitHandoff } from "./setup-handoff";
import { SHARED_DEV_MARKER, type SharedWranglerDevInfo } from "./shared-wrangler-dev-info";
import type { WranglerDev } from "./wrangler-dev";

export type { SharedWranglerDevInfo };

type SkillInput = CatalogInput["skills"][string];

/**
 * The one `wrangler dev --local` (default vars: ENVIRONMENT local, AUTH none) that the e2e global
 * setup (test/e2e/harness/e2e-global-setup.ts) starts for every file that needs no configuration
 * of its own. Files share its D1, KV and Durable Objects, so each keeps its state under its own
 * skill name (`pushSharedSkill`): sessions, runs, limits and the live feed are all per skill.
 * Never push the whole catalog (`PUT /admin/api/catalog`) here: that removes the other files'
 * skills. `stop()` does nothing (the global teardown stops it); `logs()` is what the server
 * printed since this call, so a file reads its own lines. Resolves once the server, which the
 * setup starts in the background, answers.
 */
export async function sharedWranglerDev(): Promise<WranglerDev> {
  const handoff = inject("sharedWranglerDev");
  if (handoff === undefined) {
    throw new Error(
      `No shared wrangler dev was provided: the e2e project's globalSetup (test/e2e/harness/e2e-global-setup.ts) starts it when a selected file contains "${SHARED_DEV_MARKER}"; run this file through the e2e project (npx vitest run --project e2e <file>).`,
    );
  }
  return attachSharedServer(await awaitHandoff<SharedWranglerDevInfo>(handoff, "The shared wrangler dev"));
}

/** A handle on a server the global setup started: `stop()` does nothing, `logs()` starts now. */
export function attachSharedServer(info: SharedWranglerDevInfo): WranglerDev {
  const from = statSync(info.logFile).size;
  return {
    baseUrl: info.baseUrl,
    port: info.port,
    pgid: info.pgid,
    persistDir: info.persistDir,
    startupMs: info.startupMs,
    logs: () => readFileSync(info.logFile).subarray(from).toString("utf8"),
    stop: async () => {},
  };
}

export interface SharedSkill {
  dev: WranglerDev;
  skill: string;
  /** The skill's Streamable HTTP and legacy SSE endpoints on the shared server. */
  mcpUrl: string;
  sseUrl: string;
}

/**
 * Saves one skill on the shared server through `PUT /admin/api/skills/:skill` (the other files'
 * skills stay), and returns its endpoints.
 */
export async function pushSharedSkill(dev: WranglerDev, skill: string, config: SkillInput, headers: Record<string, string> = {}): Promise<SharedSkill> {
  const response = await fetch(`${dev.baseUrl}/admin/api/skills/${encodeURIComponent(skill)}`, {
    method: "PUT",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(config),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`PUT /admin/api/skills/${skill} answered ${response.status}: ${text.slice(0, 3000)}`);
  return { dev, skill, mcpUrl: `${dev.baseUrl}/s/${skill}/mcp`, sseUrl: `${dev.baseUrl}/s/${skill}/sse` };
}
