/** The API paths a browser page on another site must not reach with the loopback dev user. */
const GUARDED_PATH = /^\/(?:admin|me)\/api(?:\/|$)/;

/**
 * Under `AUTH=none` a loopback request is the local admin, whatever sent it, and a browser sends
 * a simple request (`mode: "no-cors"`, text/plain body, no preflight) from any page to any
 * origin. So on /admin/api and /me/api a request that a browser marks as coming from another
 * site is refused: an `Origin` other than this server's own, or `Sec-Fetch-Site` other than
 * `same-origin` or `none` (a typed URL or bookmark). Requests without either header (the CLI,
 * curl, any non-browser client) pass. Returns the 403, or null.
 */
export function crossSiteRefusal(request: Request): Response | null {
  const url = new URL(request.url);
  if (!GUARDED_PATH.test(url.pathname)) return null;
  const origin = request.headers.get("origin");
  const site = request.headers.get("sec-fetch-site");
  const crossOrigin = origin !== null && origin !== url.origin;
  const crossSite = site !== null && site !== "same-origin" && site !== "none";
  if (!crossOrigin && !crossSite) return null;
  const from = crossOrigin ? `Origin ${JSON.stringify(origin.slice(0, 200))}` : `Sec-Fetch-Site: ${site?.slice(0, 40)}`;
  return Response.json(
    {
      error: `Refused a cross-site request (${from}) to ${url.pathname}: with AUTH=none, only this server's own pages and non-browser clients may use the API.`,
      fix: `Call the API from the command line (npx slipsnisse …, curl) or from a page on ${url.origin}; to use it from another site, run with sign-in on.`,
    },
    { status: 403, headers: { "Cache-Control": "no-store", Vary: "Origin, Sec-Fetch-Site" } },
  );
}
