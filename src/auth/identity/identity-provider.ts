import type { UpstreamIdentity } from "./upstream-identity";

/** Outbound fetch for upstream providers; tests hand in a fake issuer. */
export type UpstreamFetch = typeof fetch;

/** Kept server-side by `beginUpstream()` (encrypted in KV) and returned at the callback. */
export interface UpstreamData {
  /** PKCE verifier for the upstream provider; its S256 challenge goes in the redirect. */
  verifier: string;
  /** OIDC nonce, bound into the ID token. */
  nonce: string;
  /** Dev provider only: the login picked on the consent page, kept server-side so the callback cannot be steered. */
  login?: string;
}

export interface UpstreamStart {
  state: string;
  /** This Worker's callback URL, registered at the upstream provider. */
  callbackUrl: string;
  data: UpstreamData;
}

export interface UpstreamFinish {
  request: Request;
  callbackUrl: string;
  data: UpstreamData;
}

/**
 * One upstream identity provider. The consent page comes first; only after the user approved
 * does `authorizeUrl` send the browser upstream, and the callback's `finish` turns what came
 * back into an identity. Membership is decided afterwards, by membership-policy.ts.
 */
export interface IdentityProvider {
  readonly name: string;
  /**
   * Dev provider only: the local logins the consent page offers (first = default). A real
   * provider decides who signed in itself, so it has none.
   */
  readonly loginChoices?: readonly string[];
  authorizeUrl(start: UpstreamStart): Promise<string>;
  finish(finish: UpstreamFinish): Promise<UpstreamIdentity>;
  /**
   * Live facts for the refresh-time membership re-check (GitHub org membership), looked up
   * with server-side credentials because the user's upstream token is never kept.
   */
  recheckOrgMembership?(login: string): Promise<boolean>;
}
