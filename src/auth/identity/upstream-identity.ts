/**
 * Who the upstream identity provider says signed in, before membership is decided. `subject`
 * is the provider's stable id (never reused); `email` only when the provider verified it.
 */
export interface UpstreamIdentity {
  /** `enterprise`: an enterprise IdP's ID-JAG (enterprise/id-jag-grant.ts), not a sign-in. */
  provider: "dev" | "github" | "oidc" | "cloudflare-access" | "enterprise";
  subject: string;
  login: string;
  email?: string;
  groups?: string[];
  /** GitHub only: the user's org/team membership as GitHub reported it at sign-in. */
  orgMember?: boolean;
}

/**
 * The grant's userId: provider-scoped so two providers can never collide, and free of `:`,
 * which the OAuth provider uses as a separator inside its tokens and KV keys.
 */
export function userIdFor(identity: Pick<UpstreamIdentity, "provider" | "subject">): string {
  return `${identity.provider}-${encodeURIComponent(identity.subject)}`;
}

/** The provider's subject back from a userId made by `userIdFor`; undefined for any other userId. */
export function subjectOf(userId: string, provider: UpstreamIdentity["provider"]): string | undefined {
  const prefix = `${provider}-`;
  if (!userId.startsWith(prefix)) return undefined;
  try {
    return decodeURIComponent(userId.slice(prefix.length));
  } catch {
    return undefined;
  }
}
