import { WATERFALL_STYLE } from "../../experts/trace/run-waterfall";
import { UnsafeRunViewTextError } from "../mcp-errors";

/*
 * The run view's page (run-app.ts): one document, its style and script inline, nothing loaded
 * from anywhere. It speaks the MCP Apps protocol to its host over postMessage (JSON-RPC:
 * `ui/initialize`, then the host's `ui/notifications/tool-input` and `tool-result`), reads the
 * run named by the result's `slipsnisse.dev/run` through the host (`resources/read`), and resumes
 * a paused run through the host (`tools/call`). A few dozen lines of its own instead of the
 * ext-apps `App` class, which would have to be inlined whole (half a megabyte with its deps).
 *
 * What comes from the run reaches the page two ways, both inert:
 * - text from the tool result (the question, the calls awaiting approval, the outcome) is set
 *   with `textContent`, never parsed as markup;
 * - the trace is the server's HTML fragment, escaped by the server (runViewFragment), parsed by
 *   DOMParser (a document without a browsing context: nothing in it runs or loads), then kept
 *   only as the elements and attributes the waterfall uses before it is moved into the page.
 * No run data is written into this file: it is the same for every run and user.
 */

/**
 * The page's colours: the host's MCP Apps style variables (`hostContext.styles.variables`, which
 * the script sets on the root as ext-apps' applyHostStyleVariables does), ours only where the
 * host gives none. Each of our names, the host variable it follows, and our light and dark value.
 */
const PALETTE: ReadonlyArray<readonly [name: string, host: string, light: string, dark: string]> = [
  ["fg", "--color-text-primary", "#1b1f24", "#e6edf3"],
  ["muted", "--color-text-secondary", "#57606a", "#9198a1"],
  ["line", "--color-border-primary", "#d0d7de", "#3d444d"],
  ["bg", "--color-background-primary", "#fff", "#0d1117"],
  ["soft", "--color-background-secondary", "#f6f8fa", "#161b22"],
  ["accent", "--color-text-info", "#0b5cad", "#4493f8"],
  ["bad", "--color-text-danger", "#b42318", "#f85149"],
  ["ok", "--color-text-success", "#1a7f37", "#3fb950"],
  ["warn", "--color-text-warning", "#9a6700", "#d29922"],
  ["bad-bg", "--color-background-danger", "#ffebe9", "#3c1618"],
  ["note-bg", "--color-background-info", "#ddf4ff", "#0c2d6b"],
];
const LIGHT = 2;
const DARK = 3;

function colours(theme: typeof LIGHT | typeof DARK): string {
  return PALETTE.map((entry) => `--${entry[0]}:var(${entry[1]},${entry[theme]})`).join(";");
}

const STYLE = `
:root{color-scheme:light dark;${colours(LIGHT)}}
:root[data-theme=dark]{${colours(DARK)}}
@media (prefers-color-scheme:dark){:root:not([data-theme=light]){${colours(DARK)}}}
*{box-sizing:border-box}body{margin:0;padding:.75rem;font:14px/1.5 var(--font-sans,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,"Liberation Sans",system-ui,sans-serif);color:var(--fg);background-color:var(--bg)}
h1{font-size:1.1rem;margin:0 0 .25rem}h2{font-size:1rem;margin:1rem 0 .4rem}h4{margin:.25rem 0;font-size:.9rem}
code,pre{font:12px/1.45 var(--font-mono,ui-monospace,SFMono-Regular,Menlo,monospace);background:var(--soft);border-radius:4px}code{padding:0 .25rem;overflow-wrap:anywhere}
pre{padding:.5rem;overflow:auto;max-height:20rem;white-space:pre-wrap;overflow-wrap:anywhere;margin:.25rem 0}
.muted{color:var(--muted)}.bad{color:var(--bad)}.ok{color:var(--ok)}.warn{color:var(--warn)}
.error{background:var(--bad-bg);border-left:4px solid var(--bad);padding:.4rem .6rem;margin:.5rem 0}
.ask{background:var(--note-bg);border-left:4px solid var(--accent);padding:.5rem .75rem;margin:.5rem 0}.ask p{margin:.25rem 0}
.call{border-left:3px solid var(--line);padding-left:.75rem;margin:.5rem 0}
.actions{display:flex;gap:.6rem;flex-wrap:wrap;align-items:center;margin-top:.5rem}
button{font:inherit;padding:.3rem .9rem;border-radius:6px;border:1px solid var(--accent);background:var(--accent);color:#fff;cursor:pointer}
button.quiet{background:transparent;color:var(--fg);border-color:var(--line)}button:disabled{opacity:.6;cursor:default}
button:focus-visible,summary:focus-visible,textarea:focus-visible{outline:3px solid #f0a030;outline-offset:2px}
textarea{font:inherit;width:100%;min-height:3.5rem;color:var(--fg);background:var(--bg);border:1px solid var(--line);border-radius:4px;padding:.3rem}
label{font-weight:600}
${WATERFALL_STYLE}
@media (max-width:560px){.wf .wf-row{grid-template-columns:minmax(6rem,9rem) 1fr 3.5rem}}
`;

/**
 * What `fill` and `stroke` may hold in the run view: a colour (a name, `none`, `currentColor`,
 * #hex, rgb()/hsl() forms), never a paint server reference. `url(http://…)` made Chromium fetch
 * that URL from the app's frame (issue 35); no parenthesis or colon can pass inside rgb()/hsl().
 */
export const SVG_COLOUR = /^(?:[a-z]{1,30}|#[0-9a-f]{3,8}|(?:rgba?|hsla?)\([0-9a-z.,%\s/+-]{0,80}\))$/i;

export function isSvgColour(value: string): boolean {
  return SVG_COLOUR.test(value.trim());
}

/* The script: plain ES2020, no template literals (so nothing here is read as interpolation); SVG_COLOUR is put in at __SVG_COLOUR__. */
const SCRIPT = String.raw`
(function () {
  "use strict";
  var host = window.parent;
  var nextId = 1;
  var pending = new Map();
  var toolArgs = {};
  var hostCaps = {};
  var current = null;
  var RUN_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
  var title = document.getElementById("title");
  var statusLine = document.getElementById("status");
  var ask = document.getElementById("ask");
  var trace = document.getElementById("trace");

  function send(message) {
    message.jsonrpc = "2.0";
    host.postMessage(message, "*");
  }
  function request(method, params) {
    var id = nextId++;
    return new Promise(function (resolve, reject) {
      pending.set(id, { resolve: resolve, reject: reject });
      send({ id: id, method: method, params: params });
    });
  }
  function el(tag, text, cls) {
    var node = document.createElement(tag);
    if (text !== undefined) node.textContent = String(text);
    if (cls) node.className = cls;
    return node;
  }
  function setStatus(text) {
    statusLine.textContent = text;
  }
  /* The host's theme and style variables, as ext-apps' applyDocumentTheme and applyHostStyleVariables set them. */
  function applyContext(context) {
    if (!context || typeof context !== "object") return;
    var root = document.documentElement;
    if (context.theme === "light" || context.theme === "dark") {
      root.setAttribute("data-theme", context.theme);
      root.style.colorScheme = context.theme;
    }
    var variables = context.styles && typeof context.styles === "object" ? context.styles.variables : null;
    if (!variables || typeof variables !== "object") return;
    Object.keys(variables).forEach(function (name) {
      var value = variables[name];
      /* Custom properties only: a host's values reach the page's own rules through var(), nothing else. */
      if (/^--[a-z0-9-]{1,64}$/.test(name) && typeof value === "string" && value.length <= 500) root.style.setProperty(name, value);
    });
  }

  /* A deadline as the reader thinks of it: how long is left, and the moment in their own time zone. */
  function relativeTime(at) {
    var minutes = Math.round((at.getTime() - Date.now()) / 60000);
    if (minutes <= 0) return "now (the time to answer is up)";
    var words = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });
    return minutes < 90 ? words.format(minutes, "minute") : words.format(Math.round(minutes / 60), "hour");
  }
  function deadline(iso) {
    var at = new Date(iso);
    if (isNaN(at.getTime())) return el("p", undefined, "muted");
    var line = el("p", undefined, "muted deadline");
    var time = el("time", relativeTime(at));
    time.dateTime = at.toISOString();
    time.title = new Intl.DateTimeFormat(undefined, { dateStyle: "full", timeStyle: "long" }).format(at);
    var clock = new Intl.DateTimeFormat(undefined, { hour: "numeric", minute: "2-digit", timeZoneName: "short" }).format(at);
    line.append("Answer ", time, " (by " + clock + ")");
    var timer = setInterval(function () {
      if (!time.isConnected) return clearInterval(timer);
      time.textContent = relativeTime(at);
    }, 15000);
    return line;
  }

  /* Only what the waterfall draws survives: these elements, these attributes, no URL of any kind. */
  var KEEP = new Set(["SECTION", "P", "SPAN", "OL", "UL", "LI", "DETAILS", "SUMMARY", "DIV", "PRE", "CODE", "H2", "H4", "STRONG", "svg", "rect"]);
  var ATTRS = new Set(["class", "open", "role", "aria-label", "aria-hidden", "width", "height", "x", "y", "rx", "fill", "data-start-ms"]);
  var PAINT = new Set(["fill", "stroke"]);
  var COLOUR = __SVG_COLOUR__;
  function keeps(node, name) {
    return ATTRS.has(name) && (!PAINT.has(name) || COLOUR.test(String(node.getAttribute(name)).trim()));
  }
  function inert(markup) {
    var doc = new DOMParser().parseFromString("<body>" + markup, "text/html");
    var all = Array.prototype.slice.call(doc.body.querySelectorAll("*"));
    for (var i = 0; i < all.length; i++) {
      var node = all[i];
      if (!KEEP.has(node.tagName)) {
        node.remove();
        continue;
      }
      var names = node.getAttributeNames();
      for (var j = 0; j < names.length; j++) if (!keeps(node, names[j])) node.removeAttribute(names[j]);
    }
    var fragment = document.createDocumentFragment();
    while (doc.body.firstChild) fragment.appendChild(document.adoptNode(doc.body.firstChild));
    return fragment;
  }

  function metaOf(result) {
    return result && typeof result === "object" && result._meta && typeof result._meta === "object" ? result._meta : {};
  }
  function textOf(result) {
    var parts = result && Array.isArray(result.content) ? result.content : [];
    return parts.filter(function (part) { return part && part.type === "text"; }).map(function (part) { return String(part.text); }).join("\n");
  }

  function showQuestion(question, expert) {
    ask.replaceChildren();
    ask.hidden = true;
    if (!question || typeof question !== "object" || typeof question.thread !== "string") return;
    ask.hidden = false;
    var approval = question.for === "approval";
    ask.appendChild(el("h2", approval ? "Approval needed" : question.for === "user" ? "The expert asks you" : "The expert asks"));
    var listed = approval && Array.isArray(question.approvals) && question.approvals.length > 0;
    /* The approval's text lists the same calls as the list below: say it once, in the list. */
    ask.appendChild(el("p", listed ? "The expert wants to run " + (question.approvals.length === 1 ? "this call" : "these calls") + ". Nothing runs until you approve." : question.question));
    if (listed) {
      var list = el("ul");
      question.approvals.forEach(function (call) {
        var item = el("li");
        item.appendChild(el("code", call && call.name));
        item.appendChild(el("pre", call && call.input));
        list.appendChild(item);
      });
      ask.appendChild(list);
    }
    if (typeof question.expiresAt === "string") ask.appendChild(deadline(question.expiresAt));
    var actions = el("div", undefined, "actions");
    if (approval) {
      var yes = el("button", "Approve");
      var no = el("button", "Refuse", "quiet");
      yes.type = no.type = "button";
      yes.addEventListener("click", function () { resume(expert, { thread: question.thread, approve: true }, [yes, no]); });
      no.addEventListener("click", function () { resume(expert, { thread: question.thread, approve: false }, [yes, no]); });
      actions.append(yes, no);
    } else {
      var label = el("label", "Your answer");
      var box = el("textarea");
      box.id = "answer";
      label.htmlFor = "answer";
      var sendButton = el("button", "Send answer");
      sendButton.type = "button";
      sendButton.addEventListener("click", function () {
        if (box.value.trim() === "") return box.focus();
        resume(expert, { thread: question.thread, answer: box.value }, [sendButton]);
      });
      ask.append(label, box);
      actions.appendChild(sendButton);
    }
    ask.appendChild(actions);
  }

  /* A paused run resumes the way every client resumes it: the same expert, the same arguments, the thread and the decision. */
  function resume(expert, decision, buttons) {
    if (!expert) return setStatus("This run cannot be resumed from here: the host did not say which expert it came from.");
    buttons.forEach(function (button) { button.disabled = true; });
    setStatus("Resuming the run…");
    var args = Object.assign({}, toolArgs);
    delete args.approve;
    delete args.answer;
    Object.assign(args, decision);
    request("tools/call", { name: expert, arguments: args, _meta: { "slipsnisse.dev/decided-by": "user" } }).then(function (result) {
      toolArgs = args;
      if (hostCaps.updateModelContext) {
        request("ui/update-model-context", { content: [{ type: "text", text: "The user resumed the run from the run view. Its answer:\n" + textOf(result) }] }).catch(function () {});
      }
      return show(result);
    }, function (error) {
      buttons.forEach(function (button) { button.disabled = false; });
      setStatus("Could not resume the run: " + (error && error.message ? error.message : "the host refused"));
    });
  }

  function show(result) {
    var meta = metaOf(result);
    var runId = meta["slipsnisse.dev/run"];
    var outcome = meta["slipsnisse.dev/outcome"];
    var question = meta["slipsnisse.dev/question"];
    trace.replaceChildren();
    ask.replaceChildren();
    ask.hidden = true;
    if (typeof runId !== "string" || !RUN_ID.test(runId)) {
      title.textContent = "Expert run";
      setStatus(result && result.isError ? textOf(result) : "This answer names no run.");
      return Promise.resolve();
    }
    current = runId;
    setStatus("Loading run " + runId + "…");
    return request("resources/read", { uri: "slipsnisse://runs/" + runId }).then(function (read) {
      if (current !== runId) return;
      var contents = read && Array.isArray(read.contents) ? read.contents : [];
      var markup = contents.find(function (item) { return item && item.mimeType === "text/html" && typeof item.text === "string"; });
      var json = contents.find(function (item) { return item && item.mimeType === "application/json" && typeof item.text === "string"; });
      var run = null;
      try { run = json ? JSON.parse(json.text).run : null; } catch (e) { run = null; }
      if (!markup || !run) return notFound(runId);
      title.replaceChildren(document.createTextNode("Run of "), el("code", run.expert), document.createTextNode(" "), el("span", run.outcome === "running" && question ? "paused" : run.outcome, run.outcome === "ok" ? "ok" : run.outcome === "error" || run.outcome === "interrupted" ? "bad" : "warn"));
      setStatus("Run " + runId + (typeof outcome === "string" ? " · " + outcome : ""));
      showQuestion(question, typeof run.expert === "string" ? run.expert : null);
      trace.appendChild(inert(markup.text));
    }, function () {
      if (current === runId) notFound(runId);
    });
  }
  function notFound(runId) {
    title.textContent = "Run not found";
    setStatus("No run " + runId + " of yours is here: it may belong to someone else, or be past retention.");
  }

  window.addEventListener("message", function (event) {
    if (event.source !== host) return;
    var message = event.data;
    if (!message || typeof message !== "object" || message.jsonrpc !== "2.0") return;
    if (message.method === undefined && message.id !== undefined) {
      var waiting = pending.get(message.id);
      if (!waiting) return;
      pending.delete(message.id);
      if (message.error) waiting.reject(new Error(String(message.error.message)));
      else waiting.resolve(message.result);
      return;
    }
    var params = message.params || {};
    switch (message.method) {
      case "ui/notifications/tool-input":
        toolArgs = params.arguments && typeof params.arguments === "object" ? params.arguments : {};
        return;
      case "ui/notifications/tool-result":
        show(params);
        return;
      case "ui/notifications/tool-cancelled":
        setStatus("The call was cancelled.");
        return;
      case "ui/notifications/host-context-changed":
        applyContext(params);
        return;
      case "ui/resource-teardown":
      case "ping":
        send({ id: message.id, result: {} });
        return;
      default:
        if (message.id !== undefined) send({ id: message.id, error: { code: -32601, message: "Method not found" } });
    }
  });

  new ResizeObserver(function () {
    send({ method: "ui/notifications/size-changed", params: { height: Math.ceil(document.documentElement.getBoundingClientRect().height) } });
  }).observe(document.documentElement);

  request("ui/initialize", { appInfo: { name: "slipsnisse-run-view", version: "0.1.0" }, appCapabilities: {}, protocolVersion: "2026-01-26" }).then(function (result) {
    hostCaps = (result && result.hostCapabilities) || {};
    applyContext(result && result.hostContext);
    send({ method: "ui/notifications/initialized", params: {} });
  }, function (error) {
    setStatus("The host did not start the app: " + (error && error.message ? error.message : "no answer"));
  });
})();
`.replace("__SVG_COLOUR__", String(SVG_COLOUR));

/** Checked once at load, like the dashboard's raw element text: nothing may close the element early. */
for (const [element, text] of [
  ["style", STYLE],
  ["script", SCRIPT],
] as const) {
  const found = /<\/(?:style|script)|<!--/i.exec(text);
  if (found) throw new UnsafeRunViewTextError(element, found[0]);
}

export const RUN_APP_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Expert run</title><style>${STYLE}</style></head>
<body><main>
<h1 id="title">Expert run</h1>
<p id="status" class="muted" role="status">Waiting for the answer…</p>
<section id="ask" class="ask" aria-label="The run waits for you" hidden></section>
<div id="trace"></div>
</main><script>${SCRIPT}</script></body></html>`;
