/**
 * What the e2e global setup hands to test files about the one shared `wrangler dev` (through
 * vitest's provide/inject; declared in test/fixture-context.d.ts). Plain data, no Node imports,
 * because that declaration file is also part of the workerd project's types.
 */
export interface SharedWranglerDevInfo {
  baseUrl: string;
  port: number;
  pgid: number;
  persistDir: string;
  startupMs: number;
  /** Everything the shared wrangler printed, appended as it arrives. */
  logFile: string;
}

/**
 * The call a file makes to run on the shared server. The global setup starts that server only
 * when a file selected for the run contains this text, so a single-file run of another file pays
 * nothing for it.
 */
export const SHARED_DEV_MARKER = "sharedWranglerDev(";

/** The shared OAuth team server (test/e2e/oauth/dev-team-server.ts): the same, plus its admin token. */
export interface SharedTeamServerInfo extends SharedWranglerDevInfo {
  adminToken: string;
}

/** As SHARED_DEV_MARKER, for the shared OAuth team server. */
export const SHARED_TEAM_MARKER = "sharedDevTeamServer(";

/**
 * Where the e2e global setup will write a value it is still producing (the Worker bundle, a
 * shared server's info) once ready: test/e2e/harness/setup-handoff.ts.
 */
export interface SetupHandoff {
  file: string;
}
