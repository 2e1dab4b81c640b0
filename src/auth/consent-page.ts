import type { ConsentDescription } from "@cloudflare/workers-oauth-provider";
import { consentPageSecurityHeaders, escapeHtml, renderPage } from "./auth-pages";

/**
 * The consent page (MCP security best practices): the client's name (self-asserted unless it
 * is a metadata-document client with a verified domain), its full redirect URI and host, a
 * warning for loopback redirects, and the scopes. Every value may come from the client, so all
 * of it is escaped. `handle` is browser-bound by the cookie in `transactionHeaders`.
 */
export function consentPage(details: ConsentDescription, handle: string, providerName: string, transactionHeaders: Headers, loginChoices: readonly string[] = []): Response {
  const name = escapeHtml(details.clientName);
  const origin = details.clientDomain
    ? `Published by <strong>${escapeHtml(details.clientDomain)}</strong>.`
    : "This app registered itself; its name is not verified.";
  const scopes = details.scope.length > 0 ? details.scope.map((scope) => `<code>${escapeHtml(scope)}</code>`).join(" ") : "<code>mcp</code>";
  const loopback = details.redirectIsLoopback
    ? '<p class="warn"><strong>This sends access to an app on your computer.</strong> Continue only if you just started connecting from it.</p>'
    : "";
  const body = `<h1>Allow ${name} to use Slipsnisse as you?</h1>
<p>${origin}</p>
<p>Access will be sent to <strong>${escapeHtml(details.redirectHost)}</strong><br><code>${escapeHtml(details.redirectUri)}</code></p>
${loopback}
<p>Scopes: ${scopes}</p>
<p>You will sign in with ${escapeHtml(providerName)} next; only members of this team get access.</p>
<form method="post" action="/authorize">
<input type="hidden" name="handle" value="${escapeHtml(handle)}">
${loginPicker(loginChoices)}<button name="decision" value="approve">Allow</button><button name="decision" value="deny">Deny</button>
</form>`;
  const headers = new Headers(transactionHeaders);
  for (const [header, value] of Object.entries(consentPageSecurityHeaders)) headers.set(header, value);
  return new Response(renderPage(`Authorize ${details.clientName}`, body), { status: 200, headers });
}

/** Dev provider with several local users: which one to sign in as (the first is preselected). */
function loginPicker(choices: readonly string[]): string {
  if (choices.length < 2) return "";
  const options = choices.map((login, i) => `<option value="${escapeHtml(login)}"${i === 0 ? " selected" : ""}>${escapeHtml(login)}</option>`).join("");
  return `<p><label>Sign in as <select name="login">${options}</select></label></p>\n`;
}
