import { z } from "zod";
import type { AuthConfig } from "../auth-config";
import { UpstreamSignInError } from "../auth-errors";
import { verifyJwt } from "../jwt/verify-jwt";
import { s256Challenge } from "../pkce";
import type { IdentityProvider, UpstreamFetch } from "./identity-provider";
import { discoverOidc } from "./oidc-discovery";

type OidcConfig = Extract<AuthConfig["idp"], { IDP: "oidc" }>;

const tokenResponseSchema = z.object({ id_token: z.string() });
/** A claim that should be a string; anything else an IdP sends counts as absent, never as an error. */
const text = (value: unknown): string | undefined => (typeof value === "string" && value.length > 0 ? value : undefined);

/**
 * Any OpenID Connect provider (Google Workspace, Okta, Auth0, Keycloak, …): discovery, the
 * authorization code flow with PKCE S256 and a nonce, and the ID token verified against the
 * provider's JWKS. The upstream access token is never kept. An email counts for allowlists only
 * when the provider says it is verified, so a self-asserted address cannot match a domain.
 */
export function oidcIdentityProvider(idp: OidcConfig, upstreamFetch: UpstreamFetch): IdentityProvider {
  const provider = "the OIDC provider";
  return {
    name: new URL(idp.OIDC_ISSUER).host,
    async authorizeUrl({ state, callbackUrl, data }) {
      const discovery = await discoverOidc(upstreamFetch, idp.OIDC_ISSUER);
      const url = new URL(discovery.authorization_endpoint);
      url.searchParams.set("response_type", "code");
      url.searchParams.set("client_id", idp.OIDC_CLIENT_ID);
      url.searchParams.set("redirect_uri", callbackUrl);
      url.searchParams.set("scope", idp.OIDC_SCOPES);
      url.searchParams.set("state", state);
      url.searchParams.set("nonce", data.nonce);
      url.searchParams.set("code_challenge", await s256Challenge(data.verifier));
      url.searchParams.set("code_challenge_method", "S256");
      return url.toString();
    },
    async finish({ request, callbackUrl, data }) {
      const code = new URL(request.url).searchParams.get("code");
      if (!code) throw new UpstreamSignInError(provider, "the callback", "no authorization code came back");
      const discovery = await discoverOidc(upstreamFetch, idp.OIDC_ISSUER);
      const idToken = await exchangeCode(discovery.token_endpoint, code, callbackUrl, data.verifier);
      const claims = await verifyJwt(idToken, {
        provider,
        jwksUrl: discovery.jwks_uri,
        issuer: idp.OIDC_ISSUER,
        audience: idp.OIDC_CLIENT_ID,
        upstreamFetch,
      });
      if (claims.nonce !== data.nonce) throw new UpstreamSignInError(provider, "verifying the ID token", "the nonce does not match this sign-in");
      // OIDC Core §5.1 makes email_verified a boolean: "TRUE", 1 or "true" vouch for nothing,
      // and a claim of the wrong type is the provider's quirk, not a reason to fail the sign-in.
      const email = claims.email_verified === true ? text(claims.email) : undefined;
      return {
        provider: "oidc",
        subject: claims.sub,
        login: text(claims.preferred_username) ?? email ?? claims.sub,
        email,
        groups: readGroups(claims[idp.OIDC_GROUPS_CLAIM]),
      };
    },
  };

  async function exchangeCode(tokenEndpoint: string, code: string, redirectUri: string, verifier: string): Promise<string> {
    const headers: Record<string, string> = { "Content-Type": "application/x-www-form-urlencoded", Accept: "application/json" };
    const body = new URLSearchParams({
      grant_type: "authorization_code",
      code,
      redirect_uri: redirectUri,
      code_verifier: verifier,
      client_id: idp.OIDC_CLIENT_ID,
    });
    if (idp.OIDC_CLIENT_SECRET) {
      // RFC 6749 §2.3.1: client_secret_basic, form-encoding both parts first.
      headers.Authorization = `Basic ${btoa(`${encodeURIComponent(idp.OIDC_CLIENT_ID)}:${encodeURIComponent(idp.OIDC_CLIENT_SECRET)}`)}`;
    }
    const response = await upstreamFetch(tokenEndpoint, { method: "POST", headers, body, signal: AbortSignal.timeout(10_000) });
    if (!response.ok) throw new UpstreamSignInError(provider, "exchanging the code", `HTTP ${response.status} from the token endpoint`);
    const parsed = tokenResponseSchema.safeParse(await response.json());
    if (!parsed.success) throw new UpstreamSignInError(provider, "exchanging the code", "the token response has no id_token (is the openid scope requested?)");
    return parsed.data.id_token;
  }
}

function readGroups(value: unknown): string[] | undefined {
  const groups = z.union([z.array(z.string()), z.string()]).safeParse(value);
  if (!groups.success) return undefined;
  return typeof groups.data === "string" ? [groups.data] : groups.data;
}
