/**
 * Secrets are set with `wrangler secret put` (or `.dev.vars` locally), never in wrangler.toml,
 * so `wrangler types` cannot see them. Only the names the code reads directly are listed;
 * downstream headers reference arbitrary secrets by name through `readSecret`.
 */
export interface KnownSecrets {
  GOOGLE_GENERATIVE_AI_API_KEY?: string;
  ADMIN_TOKEN?: string;
  /** Signs the admin dashboard's session cookies (src/dashboard/dashboard-session.ts). */
  DASHBOARD_SESSION_KEY?: string;
  /** Encrypts connection tokens at rest (src/downstream/connections/token-cipher.ts); at least 32 characters. */
  CONNECTIONS_KEY?: string;
  /** Headers for the OpenTelemetry collector, `name=value,...` (telemetry/otel-config.ts): they hold its API key. */
  OTEL_EXPORTER_OTLP_HEADERS?: string;
}

export type AppEnv = Env & KnownSecrets;

/** A Worker secret or var by name; undefined when unset or not a string (bindings are objects). */
export function readSecret(env: Env, name: string): string | undefined {
  const value: unknown = Reflect.get(env, name);
  return typeof value === "string" && value.length > 0 ? value : undefined;
}

/** Loopback-only conveniences (unauthenticated dev user, loopback downstream URLs) need this. */
export function isLocalDevelopment(env: Env): boolean {
  return env.ENVIRONMENT === "local" || env.ENVIRONMENT === "test";
}

/**
 * The `worker_loaders` binding code-mode experts run their scripts through, when this deployment
 * has it: `Env` declares it, a tenant's deploy may still lack it (an optional binding).
 */
export function workerLoader(env: Env): Env["LOADER"] | undefined {
  const loader: unknown = Reflect.get(env, "LOADER");
  return typeof loader === "object" && loader !== null && typeof Reflect.get(loader, "load") === "function" ? env.LOADER : undefined;
}
