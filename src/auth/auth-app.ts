import { authorizationErrorRedirect, type OAuthHelpers } from "@cloudflare/workers-oauth-provider";
import { Hono } from "hono";
import { z } from "zod";
import type { AuthConfig } from "./auth-config";
import { messagePage } from "./auth-pages";
import { authorizationFailure, callbackFailure } from "./authorization-failure";
import { consentPage } from "./consent-page";
import type { IdentityProvider, UpstreamData } from "./identity/identity-provider";
import { userIdFor } from "./identity/upstream-identity";
import { recordSignIn } from "./member-directory";
import { isMemberRemoved } from "./member-removals";
import { decideMembership } from "./membership-policy";
import { randomToken } from "./pkce";
import { log } from "../observability/logger";
import { refusedAtAuthorization } from "./redirect-uri-policy";
import type { UserProps } from "./user-props";

export interface AuthAppContext {
  config: AuthConfig;
  /** This server's public origin: issuer, resource and callback base. */
  origin: string;
  idp: IdentityProvider;
  oauth(env: Env): OAuthHelpers;
}

export const authPaths = ["/authorize", "/auth/callback"] as const;
/** What this server grants; roles, not scopes, separate members from admins. */
export const grantedScopes = ["mcp"];

const upstreamDataSchema = z.object({ verifier: z.string().min(43), nonce: z.string().min(16), login: z.string().optional() });

/**
 * The interactive half of OAuth: consent, then the upstream sign-in, then membership, then the
 * grant. Order matters (docs/architecture.md#sign-in): `state` exists only after consent, and no grant
 * is written before membership is decided.
 */
export function createAuthApp(context: AuthAppContext): Hono<{ Bindings: Env }> {
  const app = new Hono<{ Bindings: Env }>();
  const callbackUrl = `${context.origin}/auth/callback`;

  app.get("/authorize", async (c) => {
    // Before the provider, which would redirect its own errors to this very URI.
    const redirectUri = c.req.query("redirect_uri");
    const refusedRedirect = redirectUri === undefined ? undefined : refusedAtAuthorization(redirectUri);
    if (refusedRedirect) return messagePage(400, "This sign-in cannot continue", refusedRedirect);
    try {
      const oauth = context.oauth(c.env);
      const request = await oauth.parseAuthRequest(c.req.raw);
      const details = await oauth.describeConsent(request);
      const consent = await oauth.beginConsent(request);
      const team = { tenant: c.env.TENANT || "default", host: new URL(context.origin).host };
      return consentPage({
        details,
        handle: consent.handle,
        team,
        providerName: context.idp.name,
        transactionHeaders: consent.headers,
        loginChoices: context.idp.loginChoices,
      });
    } catch (error) {
      return authorizationFailure(error);
    }
  });

  app.post("/authorize", async (c) => {
    try {
      const oauth = context.oauth(c.env);
      const form = await c.req.formData();
      const handle = String(form.get("handle") ?? "");
      if (form.get("decision") !== "approve") {
        const denied = await oauth.denyConsent(c.req.raw, handle);
        return new Response(null, { status: 302, headers: denied.headers });
      }
      const approved = await oauth.approveConsent(c.req.raw, handle);
      const data: UpstreamData = { verifier: randomToken(), nonce: randomToken(), ...pickedLogin(context.idp, form) };
      const upstream = await oauth.beginUpstream(approved.request, { data, headers: approved.headers });
      upstream.headers.set("Location", await context.idp.authorizeUrl({ state: upstream.state, callbackUrl, data }));
      return new Response(null, { status: 302, headers: upstream.headers });
    } catch (error) {
      return authorizationFailure(error);
    }
  });

  app.get("/auth/callback", async (c) => {
    const oauth = context.oauth(c.env);
    let resumed: Awaited<ReturnType<OAuthHelpers["finishUpstream"]>>;
    try {
      resumed = await oauth.finishUpstream(c.req.raw);
    } catch (error) {
      return authorizationFailure(error);
    }
    const { request, headers } = resumed;
    if (c.req.query("error") !== undefined) {
      headers.set("Location", authorizationErrorRedirect(request, "access_denied", "The identity provider did not sign you in."));
      return new Response(null, { status: 302, headers });
    }
    try {
      const data = upstreamDataSchema.parse(resumed.data);
      const identity = await context.idp.finish({ request: c.req.raw, callbackUrl, data });
      const userId = userIdFor(identity);
      const decision = (await isMemberRemoved(c.env, userId))
        ? { member: false as const, reason: `${identity.login} was removed from this team` }
        : decideMembership(context.config, identity);
      if (!decision.member) {
        return messagePage(
          403,
          "Not a member of this team",
          `${decision.reason}, so no access was granted. Ask an admin of this Slipsnisse server to add you.`,
          headers,
        );
      }
      const props: UserProps = { userId, login: identity.login, email: identity.email, role: decision.role, idp: identity.provider, groups: identity.groups };
      const { redirectTo } = await oauth.completeAuthorization({
        request,
        userId,
        metadata: { idp: identity.provider, login: identity.login },
        scope: grantedScopes,
        props,
      });
      // The admin's member list; a failed write must not fail the sign-in itself.
      await recordSignIn(c.env.DB, props, Date.now()).catch((error: unknown) => log("warn", "member sign-in not recorded", { error: String(error) }));
      headers.set("Location", redirectTo);
      return new Response(null, { status: 302, headers });
    } catch (error) {
      return callbackFailure(error, headers);
    }
  });

  return app;
}

/** Only the dev provider offers a choice; its authorizeUrl refuses a login it does not list. */
function pickedLogin(idp: IdentityProvider, form: FormData): { login?: string } {
  const login = form.get("login");
  return idp.loginChoices && typeof login === "string" ? { login } : {};
}
