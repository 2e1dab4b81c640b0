import type { ConsentDescription } from "@cloudflare/workers-oauth-provider";
import { consentPageSecurityHeaders, escapeHtml, renderPage } from "./auth-pages";
import { judgeRedirectUri } from "./redirect-uri-policy";

export interface ConsentPageInput {
  details: ConsentDescription;
  /** Browser-bound by the cookie in `transactionHeaders`. */
  handle: string;
  /** Whose server this is: the tenant (TENANT) and the host the member reached. */
  team: { tenant: string; host: string };
  providerName: string;
  transactionHeaders: Headers;
  /** Dev provider with several local users: which one to sign in as. */
  loginChoices?: readonly string[];
}

/**
 * The consent page (MCP security best practices): which team's server asks, the client's name
 * (self-asserted unless it is a metadata-document client with a verified domain), its full
 * redirect URI and host, a warning when the code goes to an app on this computer (a loopback
 * listener or a native app's own URI scheme), and the scopes. Every value may come from the
 * client, so all of it is escaped. Allow comes first, so it is the form's default button, and is
 * styled as the primary action; Deny is the secondary one.
 */
export function consentPage(input: ConsentPageInput): Response {
  const { details, team } = input;
  const name = escapeHtml(details.clientName);
  const tenant = escapeHtml(team.tenant);
  const origin = details.clientDomain
    ? `Published by <strong>${escapeHtml(details.clientDomain)}</strong>.`
    : "This app registered itself; its name is not verified.";
  const scopes = details.scope.length > 0 ? details.scope.map((scope) => `<code>${escapeHtml(scope)}</code>`).join(" ") : "<code>mcp</code>";
  const body = `<main>
<p class="team">Slipsnisse of team <strong>${tenant}</strong> at <strong>${escapeHtml(team.host)}</strong></p>
<h1>Allow ${name} to use Slipsnisse as you?</h1>
<p>${origin}</p>
<p>Access will be sent to <strong>${escapeHtml(details.redirectHost)}</strong><br><code>${escapeHtml(details.redirectUri)}</code></p>
${localAppWarning(details)}<p>Scopes: ${scopes}</p>
<p>You will sign in with ${escapeHtml(input.providerName)} next; only members of team ${tenant} get access.</p>
<form method="post" action="/authorize">
<input type="hidden" name="handle" value="${escapeHtml(input.handle)}">
${loginPicker(input.loginChoices ?? [])}<p class="actions"><button class="primary" name="decision" value="approve">Allow</button> <button class="secondary" name="decision" value="deny">Deny</button></p>
</form>
</main>`;
  const headers = new Headers(input.transactionHeaders);
  for (const [header, value] of Object.entries(consentPageSecurityHeaders)) headers.set(header, value);
  return new Response(renderPage(`Authorize ${details.clientName} for team ${team.tenant}`, body), { status: 200, headers });
}

/**
 * A loopback listener or a native app's scheme means the code goes to a program on the member's
 * own computer, which any local program could have asked for: only they know whether they just
 * started connecting one.
 */
function localAppWarning(details: ConsentDescription): string {
  const verdict = judgeRedirectUri(details.redirectUri);
  const local = details.redirectIsLoopback || (verdict.ok && verdict.kind !== "web");
  if (!local) return "";
  const scheme = verdict.ok && verdict.kind === "native-app" ? ` (it opens <code>${escapeHtml(new URL(details.redirectUri).protocol)}</code> links)` : "";
  return `<p class="warn" role="note"><strong>This sends access to an app on your computer${scheme}.</strong> Continue only if you just started connecting from it.</p>\n`;
}

/** Which dev user to sign in as (the first is preselected). */
function loginPicker(choices: readonly string[]): string {
  if (choices.length < 2) return "";
  const options = choices.map((login, i) => `<option value="${escapeHtml(login)}"${i === 0 ? " selected" : ""}>${escapeHtml(login)}</option>`).join("");
  return `<p><label>Sign in as <select name="login">${options}</select></label></p>\n`;
}
