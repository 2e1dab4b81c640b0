/** Every page the auth flow renders: no framing, no caching, no scripts, nothing loaded, no forms. */
export const pageSecurityHeaders: Record<string, string> = {
  "Content-Type": "text/html; charset=utf-8",
  "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "X-Frame-Options": "DENY",
  "Cache-Control": "no-store",
  "Referrer-Policy": "no-referrer",
};

/**
 * The consent page has the flow's one form, and no `form-action` at all. Chromium and Safari
 * apply `form-action` to every redirect that follows the form's POST (CSP3 §6.3.1 leaves it to
 * the navigation), and that chain runs through the identity provider's own redirects (whose
 * origins it may vary: federated sign-in, Access in front of the callback) and ends at the
 * client's registered redirect URI, whatever its scheme. No list written here can name them
 * all, and a missed one blocks sign-in. What `form-action` would guard, an injected form, is
 * kept out by escaping every value and loading no script.
 */
export const consentPageSecurityHeaders: Record<string, string> = {
  ...pageSecurityHeaders,
  "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'",
};

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

/** A page shell; `body` must already be escaped HTML. */
export function renderPage(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;color:#222}
code{background:#f3f3f3;padding:0 .25rem;overflow-wrap:anywhere}.team{color:#555;margin-bottom:0}h1{margin-top:.25rem;line-height:1.25}
select{font:inherit}
button{font:inherit;padding:.5rem 1.25rem;margin-right:.5rem;border-radius:6px;cursor:pointer}
button.primary{background:#1d4ed8;border:1px solid #1d4ed8;color:#fff;font-weight:600}
button.secondary{background:#fff;border:1px solid #888;color:#222}
button:focus-visible{outline:3px solid #f0a030;outline-offset:2px}.actions{margin-top:1.5rem}
.warn{background:#fff4e5;padding:.5rem .75rem;border-left:4px solid #f0a030}</style></head>
<body>${body}</body></html>`;
}

/** A plain message page (errors, refusals). Extra headers (cookie clearing) are merged in. */
export function messagePage(status: number, title: string, message: string, extra?: Headers): Response {
  const headers = new Headers(extra);
  for (const [name, value] of Object.entries(pageSecurityHeaders)) headers.set(name, value);
  headers.delete("Location");
  const body = `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p>`;
  return new Response(renderPage(title, body), { status, headers });
}
