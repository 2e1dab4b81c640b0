/** Where a member's connect pages live (README "Connections"); sign-in may send the browser back there. */
const CONNECT_PAGES = "/connect";
/** Well above a connect link with a callback's query (state, code, iss); a longer one is not ours. */
const MAX_LENGTH = 2000;
/** RFC 3986's characters of a path and query; no `#`, no `\`, no space or control character, nothing to re-encode. */
const URL_CHARACTERS = /^[A-Za-z0-9\-._~!$&'()*+,;=:@%/?]+$/;
/** A base of our own for parsing: the path must keep it, so nothing in it can name another origin. */
const BASE = "https://return-path.invalid";

/**
 * The page sign-in may send the browser back to, or undefined: a path of this origin's connect
 * pages, exactly as the browser would resolve it. A URL sign-in redirects to must not be one an
 * attacker can point elsewhere (an open redirect): so no scheme or host (`https://…`,
 * `//host`, `/\host`, which browsers read as `//host`), nothing the browser would normalise into
 * another path (`/connect/../admin`, tabs and newlines it strips), and no percent escape in the
 * path at all (`%2F`, `%5C`, `%2E`, `%25…`: a connect path never needs one, and a server or proxy
 * that decodes one may route elsewhere). The query is left as is: a callback's `iss` is a URL.
 */
export function safeReturnPath(next: string | undefined): string | undefined {
  if (next === undefined || next.length > MAX_LENGTH || !URL_CHARACTERS.test(next)) return undefined;
  if (!next.startsWith("/") || next.startsWith("//")) return undefined;
  let url: URL;
  try {
    url = new URL(next, BASE);
  } catch {
    return undefined;
  }
  if (url.origin !== BASE || `${url.pathname}${url.search}` !== next) return undefined;
  if (url.pathname.includes("%")) return undefined;
  return url.pathname === CONNECT_PAGES || url.pathname.startsWith(`${CONNECT_PAGES}/`) ? next : undefined;
}

/** Where a fresh sign-in lands without a return path: an admin on the dashboard, a member on their connections. */
export function landingPath(role: "admin" | "member"): string {
  return role === "admin" ? "/admin" : CONNECT_PAGES;
}
