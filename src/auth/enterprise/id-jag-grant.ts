import type { EmaOptions } from "@cloudflare/workers-oauth-provider";
import type { AuthConfig } from "../auth-config";
import { userIdFor, type UpstreamIdentity } from "../identity/upstream-identity";
import { recordSignIn } from "../member-directory";
import { isMemberRemoved } from "../member-removals";
import { decideMembership } from "../membership-policy";
import { type UserProps, vouchFor } from "../user-props";
import { log } from "../../observability/logger";

/**
 * Enterprise-managed authorization (MCP SEP-990): a client presents an ID-JAG its enterprise IdP
 * minted for this server with the JWT bearer grant, and gets our usual access token. The OAuth
 * library validates the assertion (signature against the IdP's JWKS, `typ`, issuer, audience,
 * expiry and lifetime, `client_id` bound to the authenticated client, `jti` replay); this decides
 * who the subject is, by the same membership rules as a sign-in and only from claims the IdP
 * vouches for: its subject and, unless it says unverified, its email. Undefined when the tenant
 * trusts no enterprise IdP (ENTERPRISE_IDP_ISSUER and ENTERPRISE_IDP_JWKS_URI unset).
 */
export function enterpriseAuthorization(config: AuthConfig, scopes: readonly string[]): EmaOptions<Env> | undefined {
  const issuer = config.ENTERPRISE_IDP_ISSUER;
  const jwksUri = config.ENTERPRISE_IDP_JWKS_URI;
  if (issuer === undefined || jwksUri === undefined) return undefined;
  return {
    trustedIssuers: async ({ iss }) =>
      iss === issuer
        ? {
            issuer,
            jwksUri,
            algorithms: ["RS256", "ES256"],
            ...(config.ENTERPRISE_IDP_AUDIENCE === undefined ? {} : { audience: config.ENTERPRISE_IDP_AUDIENCE }),
          }
        : null,
    mapClaims: async ({ claims, env }) => {
      const email = typeof claims.email === "string" && claims.email_verified !== false ? claims.email.toLowerCase() : undefined;
      const identity: UpstreamIdentity = { provider: "enterprise", subject: claims.sub, login: email ?? claims.sub, ...(email === undefined ? {} : { email }) };
      const userId = userIdFor(identity);
      if (await isMemberRemoved(env, userId)) return null;
      const decision = decideMembership(config, identity);
      if (!decision.member) return null;
      const user: UserProps = vouchFor({ userId, login: identity.login, ...(email === undefined ? {} : { email }), role: decision.role, idp: "enterprise" });
      // The admin's member list; a failed write must not fail the grant itself.
      await recordSignIn(env.DB, user, Date.now()).catch((error: unknown) => log("warn", "member not recorded", { error: String(error) }));
      return { userId, scope: [...scopes], props: user };
    },
  };
}
