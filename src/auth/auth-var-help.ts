/** The auth vars and secrets, with how an operator sets each one (used in config errors). */
const help = {
  ENVIRONMENT: { secret: false, example: "production", what: '"local"/"test" enable the dev identity provider' },
  PUBLIC_URL: { secret: false, example: "https://slipsnisse.example.com", what: "this server's public origin (defaults to the request's origin)" },
  IDP: { secret: false, example: "github", what: "the identity provider: github, oidc, cloudflare-access or dev" },
  ADMIN_USERS: {
    secret: false,
    example: "github:583231,bob@example.com",
    what: "users who get the admin role: verified emails, sub:<OIDC or Access subject>, GitHub logins or github:<numeric id>",
  },
  ALLOWED_USERS: {
    secret: false,
    example: "github:583231,carol@example.com",
    what: "users allowed in: verified emails, sub:<OIDC or Access subject>, GitHub logins or github:<numeric id>",
  },
  ALLOWED_EMAIL_DOMAINS: { secret: false, example: "example.com", what: "verified email domains allowed in" },
  ALLOWED_GROUPS: { secret: false, example: "engineering", what: "OIDC group claim values allowed in" },
  ALLOWED_ORIGINS: {
    secret: false,
    example: "https://claude.ai",
    what: "browser origins (scheme://host[:port], comma-separated) whose pages may call the MCP endpoints",
  },
  ACCESS_TOKEN_TTL: { secret: false, example: "3600", what: "access token lifetime in seconds (>= 60)" },
  REFRESH_TOKEN_TTL: { secret: false, example: "2592000", what: "grant lifetime in seconds (>= 60)" },
  CLIENT_REGISTRATION_TTL: { secret: false, example: "604800", what: "dynamic client registration lifetime in seconds (>= 60)" },
  DEV_USER: { secret: false, example: "alice", what: "the local user the dev identity provider signs in" },
  DEV_EMAIL: { secret: false, example: "alice@example.com", what: "the dev user's email" },
  DEV_USERS: { secret: false, example: "alice,bob", what: "more local logins the dev identity provider offers on its consent page" },
  GITHUB_CLIENT_ID: { secret: false, example: "Iv1.0123456789abcdef", what: "the GitHub OAuth app's client ID" },
  GITHUB_CLIENT_SECRET: { secret: true, example: "", what: "the GitHub OAuth app's client secret" },
  GITHUB_ORG: { secret: false, example: "my-org", what: "GitHub organization whose members get in" },
  GITHUB_TEAM: { secret: false, example: "platform", what: "team slug inside GITHUB_ORG whose members get in" },
  GITHUB_MEMBERSHIP_TOKEN: { secret: true, example: "", what: "a token with read:org that re-checks membership at refresh" },
  GITHUB_API_URL: { secret: false, example: "https://api.github.com", what: "GitHub API base (GitHub Enterprise)" },
  GITHUB_WEB_URL: { secret: false, example: "https://github.com", what: "GitHub web base (GitHub Enterprise)" },
  OIDC_ISSUER: { secret: false, example: "https://accounts.google.com", what: "the OpenID Connect issuer URL" },
  OIDC_CLIENT_ID: { secret: false, example: "slipsnisse", what: "the OIDC client ID" },
  OIDC_CLIENT_SECRET: { secret: true, example: "", what: "the OIDC client secret (omit for a public client)" },
  OIDC_SCOPES: { secret: false, example: "openid email profile groups", what: "scopes requested from the OIDC provider" },
  OIDC_GROUPS_CLAIM: { secret: false, example: "groups", what: "the ID token claim that lists groups" },
  ACCESS_TEAM_DOMAIN: { secret: false, example: "https://myteam.cloudflareaccess.com", what: "the Cloudflare Access team domain" },
  ACCESS_AUD: { secret: false, example: "4714c1358e65fe4b408ad6d432a5f878f08194bdb4752441fd56faefa9b2b6f2", what: "the Access application's AUD tag" },
  ENTERPRISE_IDP_ISSUER: {
    secret: false,
    example: "https://idp.example.com",
    what: "the enterprise identity provider whose ID-JAGs (enterprise-managed authorization) this server accepts, exactly as their `iss`",
  },
  ENTERPRISE_IDP_JWKS_URI: {
    secret: false,
    example: "https://idp.example.com/oauth2/v1/keys",
    what: "the https JWKS URL of ENTERPRISE_IDP_ISSUER's signing keys",
  },
  ENTERPRISE_IDP_AUDIENCE: {
    secret: false,
    example: "https://slipsnisse.example.com",
    what: "the audience ID-JAGs must name (defaults to this server's issuer, its origin)",
  },
} as const;

export type AuthVarName = keyof typeof help;
export const authVarNames: readonly AuthVarName[] = Object.keys(help).filter(isAuthVarName);

function isAuthVarName(name: string): name is AuthVarName {
  return Object.hasOwn(help, name);
}

/** How to set one var or secret, for an error message's `fix`. */
export function authVarHelp(name: string): string {
  const entry = isAuthVarName(name) ? help[name] : undefined;
  if (!entry) return "Check the auth vars in wrangler.toml [vars] and the secrets set with `wrangler secret put`.";
  return entry.secret
    ? `${name} is ${entry.what}: set it with \`wrangler secret put ${name}\` (or in .dev.vars locally).`
    : `${name} is ${entry.what}: add ${name} = "${entry.example}" under [vars] in wrangler.toml (or in .dev.vars locally).`;
}
