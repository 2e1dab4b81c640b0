/**
 * The browser's part of an OAuth sign-in, for Node: open the authorization URL, read the
 * consent page, approve it, follow the redirects through the identity provider, and stop at
 * the redirect to the client. Fetches never follow redirects themselves, so every hop is seen.
 */

const STEP_TIMEOUT_MS = 10_000;
const MAX_HOPS = 8;

/** A fetch bounded in time that hands redirects back instead of following them. */
export function boundedFetch(input: string | URL, init: RequestInit = {}): Promise<Response> {
  return fetch(input, { redirect: "manual", signal: AbortSignal.timeout(STEP_TIMEOUT_MS), ...init });
}

/**
 * Cookies for one origin, as a browser keeps them. The server sets its consent and upstream
 * binding cookies as `__Host-…; Secure` even on http://127.0.0.1: a browser would drop a Secure
 * cookie from a plain-http origin it does not consider trustworthy, a Node client keeps them.
 */
class OriginCookieJar {
  private readonly cookies = new Map<string, string>();
  constructor(readonly origin: string) {}
  take(url: URL, response: Response): void {
    if (url.origin !== this.origin) return;
    for (const line of response.headers.getSetCookie()) {
      const [pair = ""] = line.split(";");
      const at = pair.indexOf("=");
      if (at < 1) continue;
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      if (/max-age=0/i.test(line) || value === "") this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  headerFor(url: URL): Record<string, string> {
    if (url.origin !== this.origin || this.cookies.size === 0) return {};
    return { Cookie: [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ") };
  }
}

interface ConsentForm {
  action: URL;
  handle: string;
}

/** The visible text of an HTML page, for error messages. */
function pageText(html: string): string {
  return html
    .replace(/<head>[\s\S]*?<\/head>/i, " ")
    .replace(/<[^>]+>/g, " ")
    .replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)))
    .replace(/\s+/g, " ")
    .trim()
    .slice(0, 600);
}

function parseConsent(html: string, pageUrl: URL): ConsentForm {
  const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
  const handle = /name="handle" value="([^"]+)"/.exec(html)?.[1];
  if (!action || !handle) throw new Error(`the consent page has no form with a handle: ${pageText(html)}`);
  return { action: new URL(action, pageUrl), handle };
}

async function requireRedirect(response: Response, step: string): Promise<URL> {
  const location = response.headers.get("Location");
  if (response.status < 300 || response.status > 399 || !location) {
    throw new Error(`${step} answered ${response.status} instead of a redirect: ${pageText(await response.text())}`);
  }
  return new URL(location, response.url || undefined);
}

/**
 * Consent page → approve (as `login` when the dev provider offers a choice) → identity provider
 * hops → the redirect to the client, which is returned (code, state, iss) without being opened.
 * `isClientRedirect` tells the client's redirect apart from the hops in between.
 */
export async function approveInBrowser(authorizationUrl: URL, login: string | undefined, isClientRedirect: (url: URL) => boolean): Promise<URL> {
  const jar = new OriginCookieJar(authorizationUrl.origin);
  const consent = await boundedFetch(authorizationUrl);
  jar.take(authorizationUrl, consent);
  const html = await consent.text();
  if (consent.status !== 200) throw new Error(`the consent page answered ${consent.status}: ${pageText(html)}`);
  const form = parseConsent(html, authorizationUrl);
  // A login the page does not offer is still posted: the server, not this helper, must refuse it.
  const fields = new URLSearchParams({ handle: form.handle, decision: "approve", ...(login === undefined ? {} : { login }) });
  const posted = await boundedFetch(form.action, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", ...jar.headerFor(form.action) },
    body: fields.toString(),
  });
  jar.take(form.action, posted);
  let next = await requireRedirect(posted, "the consent POST");
  for (let hop = 0; hop < MAX_HOPS; hop++) {
    if (isClientRedirect(next)) return next;
    const response = await boundedFetch(next, { headers: jar.headerFor(next) });
    jar.take(next, response);
    next = await requireRedirect(response, `GET ${next.origin}${next.pathname}`);
  }
  throw new Error(`no redirect to the client after ${MAX_HOPS} hops (last: ${next.origin}${next.pathname})`);
}
