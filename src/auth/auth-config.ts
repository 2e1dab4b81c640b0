import { z } from "zod";
import { readSecret } from "../env";
import { AuthConfigError } from "./auth-errors";
import { allowedOriginsSchema } from "./allowed-origins";
import { isLoopbackHost } from "./loopback-host";
import { authVarHelp, type AuthVarName, authVarNames } from "./auth-var-help";

/** Every var/secret the auth code reads, as strings, the way Worker vars arrive. */
export type AuthVars = Partial<Record<AuthVarName, string>>;

const list = z
  .string()
  .optional()
  .transform((value) =>
    (value ?? "")
      .split(",")
      .map((item) => item.trim())
      .filter((item) => item.length > 0)
      .map(normalizeListEntry),
  );

/**
 * Logins, emails and `github:<id>` compare case-insensitively; a `sub:<value>` entry keeps its
 * case, because OIDC Core §2 makes `sub` a case-sensitive string (two subjects may differ only in case).
 */
function normalizeListEntry(entry: string): string {
  return /^sub:/i.test(entry) ? `sub:${entry.slice(4)}` : entry.toLowerCase();
}
// KV refuses expirations under 60 s, and the provider refuses such TTLs at construction.
const seconds = (fallback: number) => z.coerce.number().int().min(60).default(fallback);
const required = z.string().trim().min(1);
// Plain http only on loopback (`npm start`, test fixtures): tokens and codes cross these URLs.
const httpsUrl = z
  .url({ protocol: /^https?$/ })
  .refine((value) => value.startsWith("https://") || isLoopbackHost(new URL(value).hostname), "must use https (http only on 127.0.0.1/localhost)")
  .transform((value) => value.replace(/\/+$/, ""));

const baseSchema = z.object({
  ENVIRONMENT: z.string().default("production"),
  PUBLIC_URL: httpsUrl.optional(),
  ADMIN_USERS: list,
  ALLOWED_USERS: list,
  ALLOWED_EMAIL_DOMAINS: list,
  ALLOWED_GROUPS: list,
  ALLOWED_ORIGINS: allowedOriginsSchema,
  ACCESS_TOKEN_TTL: seconds(3600),
  REFRESH_TOKEN_TTL: seconds(30 * 24 * 3600),
  // claude.ai registers a fresh client on every new connection; unused ones should not pile up.
  CLIENT_REGISTRATION_TTL: seconds(7 * 24 * 3600),
  // Enterprise-managed authorization (ID-JAG): compared with the assertion's `iss` exactly, so no trailing-slash trimming.
  ENTERPRISE_IDP_ISSUER: z.url({ protocol: /^https$/ }).optional(),
  ENTERPRISE_IDP_JWKS_URI: z.url({ protocol: /^https$/ }).optional(),
  ENTERPRISE_IDP_AUDIENCE: z.string().trim().min(1).optional(),
});

const devLogin = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, "must be a login (letters, digits, . _ -)");
const devSchema = z.object({
  IDP: z.literal("dev"),
  DEV_USER: devLogin,
  DEV_EMAIL: z.email().optional(),
  // Several local users (load tests, A-versus-B checks); the consent page offers the choice.
  DEV_USERS: list.pipe(z.array(devLogin)),
});
const githubSchema = z.object({
  IDP: z.literal("github"),
  GITHUB_CLIENT_ID: required,
  GITHUB_CLIENT_SECRET: required,
  GITHUB_ORG: required.optional(),
  GITHUB_TEAM: required.optional(),
  GITHUB_MEMBERSHIP_TOKEN: required.optional(),
  GITHUB_API_URL: httpsUrl.default("https://api.github.com"),
  GITHUB_WEB_URL: httpsUrl.default("https://github.com"),
});
const oidcSchema = z.object({
  IDP: z.literal("oidc"),
  OIDC_ISSUER: httpsUrl,
  OIDC_CLIENT_ID: required,
  OIDC_CLIENT_SECRET: required.optional(),
  OIDC_SCOPES: z.string().default("openid email profile"),
  OIDC_GROUPS_CLAIM: z.string().default("groups"),
});
const accessSchema = z.object({
  IDP: z.literal("cloudflare-access"),
  ACCESS_TEAM_DOMAIN: httpsUrl,
  ACCESS_AUD: required,
});
const idpSchema = z.discriminatedUnion("IDP", [devSchema, githubSchema, oidcSchema, accessSchema], {
  error: "must be one of github, oidc, cloudflare-access, dev",
});

export type IdpConfig = z.infer<typeof idpSchema>;
export type AuthConfig = z.infer<typeof baseSchema> & { idp: IdpConfig };

/** Reads and validates the auth vars; `override` (tests, tools) wins over the Worker's env. */
export function readAuthConfig(env: Env, override: AuthVars = {}): AuthConfig {
  const raw: AuthVars = {};
  for (const name of authVarNames) {
    const value = override[name] ?? readSecret(env, name);
    if (value !== undefined) raw[name] = value;
  }
  const base = baseSchema.safeParse(raw);
  if (!base.success) throw configError(base.error);
  const idp = idpSchema.safeParse(raw);
  if (!idp.success) throw configError(idp.error);
  const config: AuthConfig = { ...base.data, idp: idp.data };
  checkCombinations(config);
  return config;
}

function configError(error: z.ZodError): AuthConfigError {
  const issue = error.issues[0];
  const name = String(issue?.path[0] ?? "IDP");
  const help = authVarHelp(name);
  const problem = issue?.code === "invalid_type" || issue?.code === "invalid_union" ? "is missing" : `is invalid (${issue?.message ?? "bad value"})`;
  return new AuthConfigError(name, problem, help);
}

function checkCombinations(config: AuthConfig): void {
  const { idp } = config;
  const hasUserLists = config.ALLOWED_USERS.length > 0 || config.ADMIN_USERS.length > 0;
  if (idp.IDP === "dev" && config.ENVIRONMENT !== "local" && config.ENVIRONMENT !== "test") {
    throw new AuthConfigError("IDP", `is "dev" while ENVIRONMENT is "${config.ENVIRONMENT}"`, authVarHelp("IDP"));
  }
  if (idp.IDP === "github") {
    if (idp.GITHUB_TEAM && !idp.GITHUB_ORG) {
      throw new AuthConfigError("GITHUB_ORG", "is missing (GITHUB_TEAM needs its organization)", authVarHelp("GITHUB_ORG"));
    }
    // Membership is re-checked at every refresh, when the user's GitHub token is long gone.
    if (idp.GITHUB_ORG && !idp.GITHUB_MEMBERSHIP_TOKEN) {
      throw new AuthConfigError("GITHUB_MEMBERSHIP_TOKEN", "is missing (needed to re-check org membership at refresh)", authVarHelp("GITHUB_MEMBERSHIP_TOKEN"));
    }
    if (!idp.GITHUB_ORG && !hasUserLists) {
      throw new AuthConfigError("GITHUB_ORG", "or ALLOWED_USERS must be set (otherwise every GitHub user would get in)", authVarHelp("GITHUB_ORG"));
    }
  }
  if ((config.ENTERPRISE_IDP_ISSUER === undefined) !== (config.ENTERPRISE_IDP_JWKS_URI === undefined)) {
    const missing = config.ENTERPRISE_IDP_ISSUER === undefined ? "ENTERPRISE_IDP_ISSUER" : "ENTERPRISE_IDP_JWKS_URI";
    throw new AuthConfigError(missing, "is missing (an enterprise identity provider needs its issuer and its JWKS URL)", authVarHelp(missing));
  }
  if (idp.IDP === "oidc" && !hasUserLists && config.ALLOWED_EMAIL_DOMAINS.length === 0 && config.ALLOWED_GROUPS.length === 0) {
    throw new AuthConfigError(
      "ALLOWED_EMAIL_DOMAINS",
      "or ALLOWED_USERS or ALLOWED_GROUPS must be set (otherwise every account at the OIDC provider would get in)",
      authVarHelp("ALLOWED_EMAIL_DOMAINS"),
    );
  }
}
