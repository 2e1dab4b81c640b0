import { GrantType, OAuthError, type TokenExchangeCallbackOptions, type TokenExchangeCallbackResult } from "@cloudflare/workers-oauth-provider";
import type { AuthConfig } from "./auth-config";
import type { IdentityProvider } from "./identity/identity-provider";
import { subjectOf } from "./identity/upstream-identity";
import { isMemberRemoved } from "./member-removals";
import { decideMembership } from "./membership-policy";
import { userPropsSchema } from "./user-props";

/**
 * The provider's `tokenExchangeCallback`: at every refresh, membership is decided again from
 * today's configuration (allowlists, admins), the removed-member mark and, for a GitHub org or
 * team, GitHub itself. A member who is out gets `invalid_grant`, which also makes the provider
 * revoke the grant, so the client must sign in again (and will be refused). A role change
 * (admin added or removed) lands in the new token's props.
 */
export function refreshMembershipCheck(config: AuthConfig, idp: IdentityProvider) {
  return async (options: TokenExchangeCallbackOptions<Env>): Promise<TokenExchangeCallbackResult | undefined> => {
    if (options.grantType !== GrantType.REFRESH_TOKEN) return undefined;
    const props = userPropsSchema.safeParse(options.props);
    if (!props.success) throw refused("the grant's identity is unreadable", "grant_props_invalid");
    if (await isMemberRemoved(options.env, props.data.userId)) throw refused("this member was removed", "member_removed");
    const provider = props.data.idp ?? config.idp.IDP;
    // Service clients hold no grant (their tokens come from the client credentials grant).
    if (provider === "service") throw refused("a service client has no refresh token", "service_client_grant");
    // Only the provider that signed the user in is asked again (an ID-JAG's user is no GitHub login).
    const orgMember = idp.recheckOrgMembership && provider === config.idp.IDP ? await idp.recheckOrgMembership(props.data.login) : undefined;
    const decision = decideMembership(config, {
      provider,
      // The provider's own subject, so `sub:`/`github:` entries match at refresh as at sign-in.
      subject: subjectOf(props.data.userId, provider) ?? props.data.userId,
      login: props.data.login,
      email: props.data.email,
      groups: props.data.groups,
      orgMember,
    });
    if (!decision.member) throw refused("membership was removed", "membership_removed");
    if (decision.role === props.data.role) return undefined;
    return { newProps: { ...props.data, role: decision.role } };
  };
}

function refused(description: string, reason: string): OAuthError {
  return new OAuthError("invalid_grant", {
    description: `Refresh refused: ${description}. Sign in again.`,
    internal: { category: "token-exchange-callback", reason },
  });
}
