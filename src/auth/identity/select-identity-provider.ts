import type { AuthConfig } from "../auth-config";
import { cloudflareAccessIdentityProvider } from "./cloudflare-access-identity-provider";
import { devIdentityProvider } from "./dev-identity-provider";
import { githubIdentityProvider } from "./github-identity-provider";
import type { IdentityProvider, UpstreamFetch } from "./identity-provider";
import { oidcIdentityProvider } from "./oidc-identity-provider";

export function selectIdentityProvider(config: AuthConfig, upstreamFetch: UpstreamFetch): IdentityProvider {
  const { idp } = config;
  switch (idp.IDP) {
    case "dev":
      return devIdentityProvider(config, idp);
    case "github":
      return githubIdentityProvider(idp, upstreamFetch);
    case "oidc":
      return oidcIdentityProvider(idp, upstreamFetch);
    case "cloudflare-access":
      return cloudflareAccessIdentityProvider(idp, upstreamFetch);
  }
}
