import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { EXTENSION_ID, RESOURCE_MIME_TYPE } from "@modelcontextprotocol/ext-apps/server";
import type { Browser, BrowserContext, Frame, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFixtureStats } from "../../fixtures/fixture-stats-client";
import { chromiumSkipReason, sharedChromium, loopbackOnlyContext, saveScreenshot } from "../harness/chromium-browser";
import { type EchoExpertStack, fakeModelExpert, startEchoExpertStack } from "../harness/echo-expert-stack";
import type { ChatRequest, ScriptedReply } from "../harness/fake-openai-server";
import { textReply, toolCallsReply, toolResultMessages } from "../harness/fake-openai-server";
import { type AppCsp, embedApp, installHost } from "../harness/mcp-app-host";
import { bearer, signInAs, type OAuthSession } from "../harness/oauth-sign-in";
import { sharedDevTeamServer, type DevTeamServer } from "../oauth/dev-team-server";

/** This file's skill on the shared team server. */
const SKILL = "run-app-e2e";
const RUN_APP_URI = "ui://slipsnisse/run-view.html";
/** The three experts' budget: a tool step and an answer, at most. */
const BUDGET = { max_steps: 3, timeout_ms: 30_000, max_output_tokens: 512, max_tool_calls: 2, max_tool_result_bytes: 4_096 };
/** The reader's time zone (Chromium's, as the test sets it): India's half-hour offset shows a UTC time passed off as local. */
const READER_TZ = "Asia/Kolkata";
/** A host's MCP Apps style variables: the page's text and background must take these, not its own colours. */
const HOST_STYLES = {
  "--color-text-primary": "rgb(10, 20, 30)",
  "--color-text-secondary": "rgb(90, 80, 70)",
  "--color-background-primary": "rgb(250, 245, 235)",
};
/** Hostile text in the model's answer and in a tool's result: it must show as text, never run. */
const HOSTILE = `</script><script>document.body.dataset.pwned="script"</script><img src=x onerror="document.body.dataset.pwned='img'"> <b>bold?</b>`;

/** The fake model: `tracer` echoes the hostile text through the fixture, then answers with it; `cleaner` erases the record the query names. */
function script(request: ChatRequest): ScriptedReply {
  const results = toolResultMessages(request);
  const query = String(request.messages.filter((message) => message.role === "user").at(-1)?.content);
  if (request.model === "fake-clean") {
    if (results.length === 0) return toolCallsReply({ name: "fx__erase", arguments: { record: query.split(" ").at(-1) } });
    return textReply(`final with ${results.map((result) => result.content).join(" | ")}`);
  }
  if (request.model === "fake-ask") {
    if (results.length === 0) return toolCallsReply({ name: "ask_user", arguments: { question: `Which region? ${HOSTILE}` } });
    return textReply(`final with ${results.map((result) => result.content).join(" | ")}`);
  }
  if (results.length === 0) return toolCallsReply({ name: "fx__echo", arguments: { text: HOSTILE } });
  return textReply(`Traced. ${HOSTILE}`);
}

interface AppClient {
  client: Client;
  call(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

/** A chat client's own MCP connection, declaring MCP Apps as ext-apps' hosts do. */
async function connectAppClient(url: string, session: OAuthSession, era: "2025" | "2026" = "2025"): Promise<AppClient> {
  const client = new Client(
    { name: "slipsnisse-e2e-app-host", version: "0.0.0" },
    {
      capabilities: { extensions: { [EXTENSION_ID]: { mimeTypes: [RESOURCE_MIME_TYPE] } } },
      ...(era === "2026" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {}),
    },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: bearer(session) } }));
  return {
    client,
    call: async (name, args) => (await client.callTool({ name, arguments: args }, { timeout: 60_000 })) as Record<string, unknown>,
    close: () => client.close(),
  };
}

/**
 * The run view as an MCP App, as a chat client shows it: a real OAuth sign-in, a real MCP client
 * declaring the extension against `wrangler dev`, the fake model and the fixture server, and in
 * Chromium the ext-apps host side (AppBridge) embedding the app's `ui://` page in a sandboxed
 * iframe under the CSP its resource declares, forwarding the app's reads and calls to that client.
 */
describe.skipIf(chromiumSkipReason !== undefined)(`Run view MCP App in Chromium${chromiumSkipReason ? ` (${chromiumSkipReason})` : ""}`, () => {
  let team: DevTeamServer;
  let stack: EchoExpertStack;
  let browser: Browser;
  let context: BrowserContext;
  let alice: OAuthSession;
  let bob: OAuthSession;
  let app: AppClient;
  let html = "";
  let csp: AppCsp = {};
  const requests: string[] = [];
  const consoleLines: string[] = [];

  beforeAll(async () => {
    team = await sharedDevTeamServer();
    [stack, browser] = await Promise.all([
      startEchoExpertStack({
        tag: "run-app",
        onServer: { dev: team.dev, skill: SKILL },
        adminHeaders: { Authorization: `Bearer ${team.adminToken}` },
        experts: (model) => [
          fakeModelExpert(model, {
            name: "tracer",
            description: "Echoes through the fixture, then answers.",
            model: "fake-trace",
            internal_tools: { fx: ["echo"] },
            budget: BUDGET,
          }),
          fakeModelExpert(model, {
            name: "asker",
            description: "Asks the user before it answers.",
            model: "fake-ask",
            ask_back: true,
            budget: BUDGET,
          }),
          fakeModelExpert(model, {
            name: "cleaner",
            description: "Erases records on request, once approved.",
            model: "fake-clean",
            internal_tools: { fx: ["erase"] },
            budget: BUDGET,
          }),
        ],
      }),
      sharedChromium(),
    ]);
    stack.fake.reset(script);
    [alice, bob] = await Promise.all([signInAs(team.dev.baseUrl, "alice"), signInAs(team.dev.baseUrl, "bob")]);
    app = await connectAppClient(stack.mcpUrl, alice);
    const [page] = (await app.client.readResource({ uri: RUN_APP_URI })).contents;
    html = page && "text" in page ? page.text : "";
    csp = ((page?._meta as { ui?: { csp?: AppCsp } } | undefined)?.ui?.csp ?? {}) as AppCsp;
    context = await loopbackOnlyContext(browser, { timezoneId: READER_TZ, locale: "en-US" });
  }, 120_000);

  afterAll(async () => {
    await app?.close();
    await browser?.close();
    await Promise.allSettled([stack?.stop(), team?.stop()]);
  });

  /** A fresh host page whose every request and console line is logged. */
  async function hostPage(through: AppClient = app): Promise<Page> {
    const page = await context.newPage();
    page.on("request", (request) => requests.push(request.url()));
    page.on("console", (message) => consoleLines.push(message.text()));
    await installHost(page, {
      callTool: (params) => through.client.callTool(params as { name: string; arguments?: Record<string, unknown> }, { timeout: 60_000 }),
      readResource: (params) => through.client.readResource(params as { uri: string }),
    });
    requests.length = 0;
    return page;
  }

  const pwned = (frame: Frame) => frame.evaluate<string | null>("document.body.dataset.pwned ?? null");

  it("declares a CSP with no connect or resource domains, and lists the app only for this client", async () => {
    expect(csp).toEqual({ connectDomains: [], resourceDomains: [] });
    const { tools } = await app.client.listTools(undefined, { cacheMode: "bypass" });
    expect(tools.map((tool) => [tool.name, (tool._meta as { ui?: { resourceUri?: string } } | undefined)?.ui?.resourceUri])).toEqual([
      ["tracer", RUN_APP_URI],
      ["asker", RUN_APP_URI],
      ["cleaner", RUN_APP_URI],
    ]);
  });

  it("draws a finished run's waterfall in the chat, hostile text inert, with no request of its own", async () => {
    const result = await app.call("tracer", { query: "trace me" });
    const page = await hostPage();
    await page.setViewportSize({ width: 940, height: 700 });
    const hosted = await embedApp(page, { html, csp, toolName: "tracer", args: { query: "trace me" }, result, theme: "light" });
    const frame = await hosted.frame();
    await frame.waitForSelector("rect.wf-bar.wf-model");
    const kinds = await frame.locator("rect.wf-bar").evaluateAll((rects) => rects.map((rect) => rect.getAttribute("class")));
    expect(kinds).toEqual(expect.arrayContaining(["wf-bar wf-model", "wf-bar wf-tool"]));
    expect(await frame.locator("h1").innerText()).toMatch(/Run of tracer ok/);
    // The answer and the echoed tool result show the hostile text as text; nothing of it ran.
    await frame.evaluate("document.querySelectorAll('details').forEach((element) => { element.open = true; })");
    expect(await frame.locator("pre.answer").innerText()).toContain(HOSTILE);
    expect(await frame.locator("section.call pre").allInnerTexts()).toEqual(expect.arrayContaining([expect.stringContaining("onerror=")]));
    expect(await frame.locator("img, script:not(:first-of-type), b").count()).toBe(0);
    expect(await pwned(frame)).toBeNull();
    await saveScreenshot(page, "run-app-finished-light");

    // Dark, as a host in dark mode tells it.
    const dark = await embedApp(page, { html, csp, toolName: "tracer", args: { query: "trace me" }, result, theme: "dark" });
    const darkFrame = await dark.frame();
    await darkFrame.waitForSelector("rect.wf-bar.wf-model");
    const colours = await darkFrame.evaluate<string[]>("[getComputedStyle(document.body).backgroundColor, getComputedStyle(document.body).color]");
    expect(colours).toEqual(["rgb(13, 17, 23)", "rgb(230, 237, 243)"]);
    await saveScreenshot(page, "run-app-finished-dark");

    // A host that passes its style variables: the page's text and background are the host's.
    const styled = await embedApp(page, { html, csp, toolName: "tracer", args: { query: "trace me" }, result, theme: "light", styles: HOST_STYLES });
    const styledFrame = await styled.frame();
    await styledFrame.waitForSelector("rect.wf-bar.wf-model");
    const hostColours = await styledFrame.evaluate<string[]>(
      "[getComputedStyle(document.body).backgroundColor, getComputedStyle(document.body).color, getComputedStyle(document.getElementById('status')).color]",
    );
    expect(hostColours).toEqual([HOST_STYLES["--color-background-primary"], HOST_STYLES["--color-text-primary"], HOST_STYLES["--color-text-secondary"]]);
    await saveScreenshot(page, "run-app-host-styles");

    // The app talked only to its host: no request left the page, and nothing was refused by the CSP.
    expect(requests).toEqual([]);
    expect(consoleLines.filter((line) => /Refused|Content Security Policy/i.test(line))).toEqual([]);
    await page.close();
  }, 90_000);

  // 2025-11-25 (stateless, the extension remembered in the Mcp-Session-Id) approves; 2026-07-28 (declared per request) refuses.
  for (const [era, decision] of [
    ["2025", "Approve"],
    ["2026", "Refuse"],
  ] as const) {
    it(`${decision === "Approve" ? "approves" : "refuses"} a paused run with its button, and the run finishes in the app (${era})`, async () => {
      const client = era === "2025" ? app : await connectAppClient(stack.mcpUrl, alice, era);
      try {
        const record = `rec-app-${era}-${Date.now()}`;
        const args = { query: `Erase ${record}` };
        const paused = await client.call("cleaner", args);
        const question = (paused._meta as Record<string, { for?: string }> | undefined)?.["slipsnisse.dev/question"];
        expect(question?.for).toBe("approval");
        const before = (await readFixtureStats(stack.fxBase)).calls.erase ?? 0;

        const page = await hostPage(client);
        await page.setViewportSize({ width: 940, height: 700 });
        if (era === "2025") {
          const dark = await embedApp(page, { html, csp, toolName: "cleaner", args, result: paused, theme: "dark" });
          await (await dark.frame()).getByRole("button", { name: "Approve" }).waitFor();
          await saveScreenshot(page, "run-app-paused-dark");
        }
        const hosted = await embedApp(page, { html, csp, toolName: "cleaner", args, result: paused, theme: "light" });
        const frame = await hosted.frame();
        const button = frame.getByRole("button", { name: decision });
        await button.waitFor();
        const ask = await frame.locator("#ask").innerText();
        expect(ask).toContain("fx__erase");
        // The call to approve is shown once, in the list: the approval's raw text, which lists it too, is
        // repeated neither above the list nor as the run's "answer" below the trace.
        expect(ask.split(record).length - 1).toBe(1);
        expect((await frame.locator("body").innerText()).split(record).length - 1).toBe(1);
        // The deadline as the reader thinks of it: how long is left, and the moment in their own time zone.
        const expiresAt = new Date(String((question as { expiresAt?: string } | undefined)?.expiresAt));
        const minutes = Math.round((expiresAt.getTime() - Date.now()) / 60_000);
        const deadline = frame.locator("#ask time");
        expect([minutes - 1, minutes, minutes + 1].map((n) => `in ${n} minutes`)).toContain(await deadline.innerText());
        const local = new Intl.DateTimeFormat("en-US", { dateStyle: "full", timeStyle: "long", timeZone: READER_TZ }).format(expiresAt);
        const spaces = (text: string | null) => (text ?? "").replace(/\s+/gu, " ");
        expect(spaces(await deadline.getAttribute("title"))).toBe(spaces(local));
        expect(spaces(local)).toContain("GMT+5:30");
        expect(ask).not.toContain(expiresAt.toISOString());
        // The person in the chat decides: nothing on the page says the orchestrator does.
        const pageText = await frame.locator("body").innerText();
        expect(pageText).not.toMatch(/orchestrator/i);
        expect(pageText).toContain("Waiting for your decision");
        await saveScreenshot(page, `run-app-paused-${era}`);

        const pausedRun = (paused._meta as Record<string, string>)["slipsnisse.dev/run"];
        await button.click();
        // The resumed run is a run of its own on the same thread: the app shows it once it has ended.
        await frame.getByRole("heading", { name: /Run of cleaner ok/ }).waitFor();
        expect(await frame.locator("#status").innerText()).not.toContain(pausedRun);
        expect(await frame.locator("#ask").isHidden()).toBe(true);
        // The click is the user's decision, and the trace says so.
        expect(await frame.locator("ol.wf").innerText()).toContain(`${decision === "Approve" ? "approved" : "declined"} by the user`);
        if (decision === "Approve") {
          expect(await frame.locator("pre.answer").innerText()).toContain(`erased ${record}`);
          expect((await readFixtureStats(stack.fxBase)).calls.erase ?? 0).toBe(before + 1);
        } else {
          expect(await frame.locator("pre.answer").innerText()).not.toContain(`erased ${record}`);
          expect(await frame.locator("ol.wf").innerText()).toContain("declined");
          expect((await readFixtureStats(stack.fxBase)).calls.erase ?? 0).toBe(before);
        }
        await saveScreenshot(page, `run-app-resumed-${era}`);
        expect(requests).toEqual([]);
        await page.close();
      } finally {
        if (client !== app) await client.close();
      }
    }, 90_000);
  }

  it("takes the run view's word that the user decided only from a client that declared the extension", async () => {
    const plain = new Client({ name: "slipsnisse-e2e-plain", version: "0.0.0" });
    await plain.connect(new StreamableHTTPClientTransport(new URL(stack.mcpUrl), { requestInit: { headers: bearer(alice) } }));
    try {
      const record = `rec-plain-${Date.now()}`;
      const paused = await plain.callTool({ name: "cleaner", arguments: { query: `Erase ${record}` } });
      const thread = (paused._meta as Record<string, { thread: string }>)["slipsnisse.dev/question"]?.thread;
      const resumed = await plain.callTool({
        name: "cleaner",
        arguments: { query: `Erase ${record}`, thread, approve: true },
        _meta: { "slipsnisse.dev/decided-by": "user" },
      });
      const runId = (resumed._meta as Record<string, string>)["slipsnisse.dev/run"];
      const contents = (await plain.readResource({ uri: `slipsnisse://runs/${runId}` })).contents;
      expect(contents.map((content) => content.mimeType)).toEqual(["text/markdown", "application/json"]);
      const json = contents[1] && "text" in contents[1] ? contents[1].text : "null";
      const decisions = (JSON.parse(json) as { steps: Array<{ toolCalls: Array<{ decision?: { by: string } }> }> }).steps.flatMap((step) =>
        step.toolCalls.flatMap((call) => (call.decision ? [call.decision.by] : [])),
      );
      expect(decisions).toEqual(["orchestrator"]);
    } finally {
      await plain.close();
    }
  }, 60_000);

  it("answers the expert's question to the user from the app, its hostile text shown as text", async () => {
    const args = { query: "plan the deploy" };
    const asked = await app.call("asker", args);
    expect((asked._meta as Record<string, { for?: string }>)["slipsnisse.dev/question"]?.for).toBe("user");
    const page = await hostPage();
    await page.setViewportSize({ width: 940, height: 700 });
    const hosted = await embedApp(page, { html, csp, toolName: "asker", args, result: asked, theme: "light" });
    const frame = await hosted.frame();
    const box = frame.getByLabel("Your answer");
    await box.waitFor();
    expect(await frame.locator("#ask").innerText()).toContain(`Which region? ${HOSTILE}`);
    expect(await pwned(frame)).toBeNull();
    await saveScreenshot(page, "run-app-question");
    await box.fill("eu-north, said the user");
    await frame.getByRole("button", { name: "Send answer" }).click();
    await frame.getByRole("heading", { name: /Run of asker ok/ }).waitFor();
    expect(await frame.locator("pre.answer").innerText()).toContain("eu-north, said the user");
    expect(await pwned(frame)).toBeNull();
    expect(requests).toEqual([]);
    await page.close();
  }, 90_000);

  it("shows nothing of another user's run: the host's read of bob's run id is not found", async () => {
    const bobClient = await connectAppClient(stack.mcpUrl, bob);
    let bobResult: Record<string, unknown>;
    try {
      bobResult = await bobClient.call("tracer", { query: "bob's secret trace" });
    } finally {
      await bobClient.close();
    }
    const page = await hostPage();
    // Alice's host is handed a result naming bob's run (a forged or misrouted result).
    const hosted = await embedApp(page, { html, csp, toolName: "tracer", args: {}, result: { content: [], _meta: bobResult._meta }, theme: "light" });
    const frame = await hosted.frame();
    await frame.getByRole("heading", { name: "Run not found" }).waitFor();
    expect(await frame.locator("rect.wf-bar").count()).toBe(0);
    expect(await frame.locator("body").innerText()).not.toContain("secret");
    await saveScreenshot(page, "run-app-other-user");
    await page.close();
  }, 60_000);

  it("keeps a trace inert even if the server's escaping failed: no markup beyond the waterfall's survives in the app", async () => {
    const page = await context.newPage();
    page.on("request", (request) => requests.push(request.url()));
    const runId = crypto.randomUUID();
    const raw = `<p>before</p><img src="http://127.0.0.1:9/pixel" onerror="document.body.dataset.pwned='img'"><script>document.body.dataset.pwned='script'</script><a href="javascript:document.body.dataset.pwned='link'">link</a><iframe src="http://127.0.0.1:9/frame"></iframe><svg><rect class="wf-bar" onload="document.body.dataset.pwned='svg'" width="10" height="10"></rect></svg><p style="background:url(http://127.0.0.1:9/bg)">after</p>`;
    await installHost(page, {
      callTool: async () => ({ content: [] }),
      readResource: async () => ({
        contents: [
          { uri: `slipsnisse://runs/${runId}`, mimeType: "text/html", text: raw },
          { uri: `slipsnisse://runs/${runId}`, mimeType: "application/json", text: JSON.stringify({ run: { id: runId, expert: "tracer", outcome: "ok" } }) },
        ],
      }),
    });
    requests.length = 0;
    const hosted = await embedApp(page, {
      html,
      csp: {},
      toolName: "tracer",
      args: {},
      result: { content: [], _meta: { "slipsnisse.dev/run": runId } },
      theme: "light",
    });
    const frame = await hosted.frame();
    await frame.getByText("after").waitFor();
    expect(await frame.evaluate<string>('document.getElementById("trace").innerHTML')).toBe(
      '<p>before</p><svg><rect class="wf-bar" width="10" height="10"></rect></svg><p>after</p>',
    );
    expect(await pwned(frame)).toBeNull();
    expect(requests).toEqual([]);
    await page.close();
  }, 60_000);

  // Issue 35: `fill` was kept with any value, and a paint server URL made Chromium fetch it from the app's frame.
  it("keeps only colours in fill and stroke: a paint server URL in a trace fetches nothing, even where the host's CSP would let it", async () => {
    const hits: string[] = [];
    const listener = createServer((request, response) => {
      hits.push(String(request.url));
      response.writeHead(200, { "content-type": "image/svg+xml" }).end('<svg xmlns="http://www.w3.org/2000/svg"><linearGradient id="p"/></svg>');
    });
    await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
    const origin = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
    const page = await context.newPage();
    try {
      const runId = crypto.randomUUID();
      const paints = [`url(${origin}/fill#p)`, ` URL(${origin}/upper#p)`, `red url(${origin}/after-colour#p)`, `rgb(url(${origin}/nested#p))`];
      const raw = `${paints.map((paint, index) => `<svg><rect class="wf-bar hostile-${index}" width="10" height="10" fill="${paint}" stroke="url(${origin}/stroke-${index}#p)"></rect></svg>`).join("")}<svg><rect class="wf-bar kept" width="10" height="10" fill="#0b5cad"></rect></svg><p>after</p>`;
      await installHost(page, {
        callTool: async () => ({ content: [] }),
        readResource: async () => ({
          contents: [
            { uri: `slipsnisse://runs/${runId}`, mimeType: "text/html", text: raw },
            { uri: `slipsnisse://runs/${runId}`, mimeType: "application/json", text: JSON.stringify({ run: { id: runId, expert: "tracer", outcome: "ok" } }) },
          ],
        }),
      });
      const pageRequests: string[] = [];
      page.on("request", (request) => pageRequests.push(request.url()));
      // A host whose CSP admits the listener: the filter alone must keep the URL out.
      const hosted = await embedApp(page, {
        html,
        csp: { resourceDomains: [origin], connectDomains: [] },
        toolName: "tracer",
        args: {},
        result: { content: [], _meta: { "slipsnisse.dev/run": runId } },
        theme: "light",
      });
      const frame = await hosted.frame();
      await frame.getByText("after").waitFor();
      // Two rendered frames: style and paint of the rects have happened, so any paint fetch has been issued.
      await frame.evaluate("new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))");
      const fills = await frame.locator("#trace rect").evaluateAll((rects) => rects.map((rect) => [rect.getAttribute("fill"), rect.getAttribute("stroke")]));
      expect(pageRequests.filter((url) => url.startsWith(origin))).toEqual([]);
      expect(hits).toEqual([]);
      expect(fills).toEqual([...paints.map(() => [null, null]), ["#0b5cad", null]]);
    } finally {
      await page.close();
      await new Promise((resolve) => listener.close(resolve));
    }
  }, 60_000);
});
