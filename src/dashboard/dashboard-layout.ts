import { html } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import { randomToken } from "../auth/pkce";
import { stripControlCharacters } from "../untrusted/control-characters";
import { formatTime, WATERFALL_STYLE } from "../experts/trace/run-waterfall";
import { type RawElementText, rawElementText } from "./raw-element-text";

export { formatTime };

export type Markup = HtmlEscapedString | Promise<HtmlEscapedString>;

export interface PageFrame {
  title: string;
  /** The signed-in admin's login, shown in the header with a sign-out button. */
  login?: string;
  /** The session's CSRF token for the sign-out form; pages put it in their own forms too. */
  csrf?: string;
  /** Which nav entry is the current page. */
  current?: NavEntry;
  /** False on refusals: the pages would only refuse again. */
  nav?: boolean;
  /** Who the page is for: the connect pages serve every member, not only admins; sign-in serves whoever comes, signed in or not. */
  audience?: "admin" | "member" | "anyone";
}

const NAV = [
  ["overview", "/admin", "Overview"],
  ["runs", "/admin/runs", "Runs"],
  ["live", "/admin/live", "Live"],
  ["skills", "/admin/skills", "Skills and experts"],
  ["servers", "/admin/servers", "Servers"],
  ["catalog", "/admin/catalog", "Catalog"],
  ["evals", "/admin/evals", "Evals"],
  ["members", "/admin/members", "Members"],
  ["connections", "/admin/connections", "Connections"],
] as const;
export type NavEntry = (typeof NAV)[number][0];

/**
 * Nothing external; styles, and the live page's one script, carry the page's nonce; forms post
 * to this origin only. `form-action 'self'` is safe here because every dashboard form posts same-origin and
 * redirects same-origin (the sign-in page, whose redirect leaves for the identity provider,
 * uses a link instead of a form).
 */
export function dashboardHeaders(nonce: string, withScript = false): Record<string, string> {
  // A page with a script (live) may run only its own nonce'd one and talk only to this origin.
  const script = withScript ? ` script-src 'nonce-${nonce}'; connect-src 'self';` : "";
  return {
    "Content-Type": "text/html; charset=utf-8",
    "Content-Security-Policy": `default-src 'none'; style-src 'nonce-${nonce}';${script} img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'`,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
    "Referrer-Policy": "same-origin",
  };
}

/** Unescaped in the page (raw-element-text.ts): an escaped `"` would drop the `font` declaration. */
const STYLE = rawElementText(
  "style",
  `
:root{--fg:#1b1f24;--muted:#57606a;--line:#d0d7de;--bg:#fff;--soft:#f6f8fa;--accent:#0b5cad;--bad:#b42318;--ok:#1a7f37;--warn:#9a6700}
*{box-sizing:border-box}body{margin:0;font:15px/1.5 -apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,"Liberation Sans",system-ui,sans-serif;color:var(--fg);background:var(--bg)}
header{display:flex;flex-wrap:wrap;gap:.5rem 1.5rem;align-items:center;padding:.6rem 1rem;border-bottom:1px solid var(--line);background:var(--soft)}
header .brand{font-weight:700;color:var(--fg);text-decoration:none}
nav ul{display:flex;flex-wrap:wrap;gap:.25rem 1rem;list-style:none;margin:0;padding:0}
nav a{color:var(--accent);text-decoration:none;padding:.2rem 0}nav a[aria-current=page]{color:var(--fg);font-weight:600;border-bottom:2px solid var(--accent)}
header .who{margin-left:auto;display:flex;gap:.5rem;align-items:center;color:var(--muted)}
main{max-width:72rem;margin:0 auto;padding:1rem}
h1{font-size:1.5rem;margin:.5rem 0 1rem}h2{font-size:1.15rem;margin:1.5rem 0 .5rem}
a{color:var(--accent)}a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible,summary:focus-visible{outline:3px solid #f0a030;outline-offset:2px}
table{border-collapse:collapse;width:100%;margin:.5rem 0}th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}
th{font-weight:600;color:var(--muted);font-size:.85rem}td ul{margin:0;padding-left:1rem}.table-wrap{overflow-x:auto}
code,pre{font:13px/1.45 ui-monospace,SFMono-Regular,Menlo,monospace;background:var(--soft);border-radius:4px}code{padding:0 .25rem;overflow-wrap:anywhere}
pre{padding:.5rem;overflow:auto;max-height:24rem;white-space:pre-wrap;overflow-wrap:anywhere}
button{font:inherit;padding:.35rem .9rem;border-radius:6px;border:1px solid var(--accent);background:var(--accent);color:#fff;cursor:pointer}
button.quiet{background:#fff;color:var(--fg);border-color:var(--line)}
a.button{display:inline-block;padding:.35rem .9rem;border-radius:6px;border:1px solid var(--accent);text-decoration:none;white-space:nowrap}
button.danger{background:var(--bad);border-color:var(--bad)}a.button.danger{color:var(--bad);border-color:var(--bad);background:#fff}p.actions{display:flex;gap:1rem;align-items:center}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(11rem,1fr));gap:.75rem}
.card{border:1px solid var(--line);border-radius:8px;padding:.6rem .8rem}.card .n{font-size:1.5rem;font-weight:700}.card .l{color:var(--muted);font-size:.85rem}
.muted{color:var(--muted)}.bad{color:var(--bad)}.ok{color:var(--ok)}.warn{color:var(--warn)}
.notice{background:#ddf4ff;border-left:4px solid var(--accent);padding:.5rem .75rem;margin:.5rem 0}
.error{background:#ffebe9;border-left:4px solid var(--bad);padding:.5rem .75rem;margin:.5rem 0}
.side{display:grid;grid-template-columns:1fr 1fr;gap:.75rem}@media (max-width:700px){.side{grid-template-columns:1fr}}
.diff del{background:#ffebe9;text-decoration:none;display:block}.diff ins{background:#dafbe1;text-decoration:none;display:block}
form.inline{display:inline}.filters{display:flex;flex-wrap:wrap;gap:.4rem .6rem;align-items:center;margin-bottom:.75rem}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem}dl.facts dt{color:var(--muted)}dl.facts dd{margin:0;overflow-wrap:anywhere}
ol.steps{padding-left:1.25rem}ol.steps>li{margin-bottom:1rem}.call{border-left:3px solid var(--line);padding-left:.75rem;margin:.5rem 0}
code.name,.name{overflow-wrap:normal;word-break:normal}
${WATERFALL_STYLE}
figure.chart{margin:0}figure.chart figcaption{font-weight:600;margin:.5rem 0}label{font-weight:600}select,input{font:inherit;padding:.25rem}
`,
);

/** The page shell: header with navigation and the signed-in admin, then `body` (already escaped markup). */
export async function renderDashboardPage(
  frame: PageFrame,
  body: Markup,
  status = 200,
  extraHeaders: Record<string, string> = {},
  script?: RawElementText<"script">,
): Promise<Response> {
  const nonce = randomToken();
  const brand = frame.audience === "member" || frame.audience === "anyone" ? "Slipsnisse" : "Slipsnisse admin";
  const home = frame.audience === "anyone" ? undefined : frame.audience === "member" ? "/connect" : "/admin";
  const page = await html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${frame.title} · ${brand}</title><style nonce="${nonce}">${STYLE}</style></head>
<body><header>${home === undefined ? html`<span class="brand">${brand}</span>` : html`<a class="brand" href="${home}">${brand}</a>`}
${
  frame.login === undefined
    ? ""
    : html`${frame.nav === false ? "" : html`<nav aria-label="Dashboard"><ul>${NAV.map(([id, href, label]) => html`<li><a href="${href}"${id === frame.current ? html` aria-current="page"` : ""}>${label}</a></li>`)}</ul></nav>`}
<div class="who"><span>Signed in as <strong>${frame.login}</strong></span>${
        frame.csrf === undefined
          ? ""
          : html`<form class="inline" method="post" action="/admin/logout"><input type="hidden" name="csrf" value="${frame.csrf}"><button class="quiet" type="submit">Sign out</button></form>`
      }</div>`
}
</header><main>${body}</main>${script === undefined ? "" : html`<script nonce="${nonce}">${script}</script>`}</body></html>`;
  // Text from models and servers (run answers, tool names, errors) is in the page: no control characters.
  return new Response(stripControlCharacters(page.toString()), { status, headers: { ...dashboardHeaders(nonce, script !== undefined), ...extraHeaders } });
}

/** A plain refusal or error page in the dashboard's frame. */
export function dashboardMessage(
  status: number,
  title: string,
  message: string,
  frame: Omit<PageFrame, "title"> = {},
  extraHeaders: Record<string, string> = {},
): Promise<Response> {
  return renderDashboardPage({ ...frame, title }, html`<h1>${title}</h1><p>${message}</p>`, status, extraHeaders);
}

/** A latency for a table cell: "—" when there were no runs to measure. */
export function formatMs(ms: number | null | undefined): string {
  return ms === null || ms === undefined ? "—" : `${ms} ms`;
}
