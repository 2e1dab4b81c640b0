import { z } from "zod";
import type { AuthConfig } from "../auth-config";
import { UpstreamSignInError } from "../auth-errors";
import { verifyJwt } from "../jwt/verify-jwt";
import type { IdentityProvider, UpstreamFetch } from "./identity-provider";

type AccessConfig = Extract<AuthConfig["idp"], { IDP: "cloudflare-access" }>;

const accessClaimsSchema = z.object({ email: z.string().optional() }).loose();

/**
 * Cloudflare Access in front of /authorize and /auth/callback: Access has already signed the
 * user in and applied its policy; the Worker trusts only the `Cf-Access-Jwt-Assertion` JWT,
 * verified against the team domain's certs, the team issuer and this application's AUD (a
 * request that reached the Worker around Access has no valid assertion). The "upstream" step
 * is a hop to our own callback, so the state and consent machinery stay the same.
 */
export function cloudflareAccessIdentityProvider(idp: AccessConfig, upstreamFetch: UpstreamFetch): IdentityProvider {
  const provider = "Cloudflare Access";
  return {
    name: "Cloudflare Access",
    async authorizeUrl({ state, callbackUrl }) {
      const url = new URL(callbackUrl);
      url.searchParams.set("state", state);
      return url.toString();
    },
    async finish({ request }) {
      const assertion = request.headers.get("Cf-Access-Jwt-Assertion");
      if (!assertion) {
        throw new UpstreamSignInError(
          provider,
          "reading the Access assertion",
          "the request carries no Cf-Access-Jwt-Assertion header (put /authorize and /auth/callback behind the Access application)",
        );
      }
      const claims = await verifyJwt(assertion, {
        provider,
        jwksUrl: `${idp.ACCESS_TEAM_DOMAIN}/cdn-cgi/access/certs`,
        issuer: idp.ACCESS_TEAM_DOMAIN,
        audience: idp.ACCESS_AUD,
        upstreamFetch,
      });
      // An email of another type counts as none (the login falls back to the subject), never a 500.
      const email = accessClaimsSchema.safeParse(claims).data?.email;
      return { provider: "cloudflare-access", subject: claims.sub, login: email ?? claims.sub, email };
    },
  };
}
