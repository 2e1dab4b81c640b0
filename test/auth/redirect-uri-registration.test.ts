import { describe, expect, it } from "vitest";
import { z } from "zod";
import { randomToken } from "../../src/auth/pkce";
import { authTestWorker, claudeCallback, loopbackOrigin } from "./helpers/auth-test-worker";
import { authorizeThroughDev, discover, exchangeCode, openConsent, register } from "./helpers/oauth-test-client";

const mcpUrl = `${loopbackOrigin}/mcp`;
const CURSOR = "cursor://anysphere.cursor-mcp/oauth/callback";
const refusal = z.object({ error: z.literal("invalid_redirect_uri"), error_description: z.string() });

/** Which redirect URIs a client may register (RFC 7591, RFC 8252 §7.1 and §7.3, OAuth 2.1 §2.3.1). */
describe("redirect URIs at registration and authorization", () => {
  const worker = authTestWorker();

  async function registration(redirectUris: string[]): Promise<Response> {
    const discovery = await discover(worker, mcpUrl);
    return worker.fetch(discovery.metadata.registration_endpoint, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        client_name: "Table",
        redirect_uris: redirectUris,
        token_endpoint_auth_method: "none",
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
      }),
    });
  }

  const accepted: Record<string, string[]> = {
    "claude.ai (https)": [claudeCallback],
    "Claude Code (loopback listener on 127.0.0.1)": ["http://127.0.0.1:33418/callback"],
    "loopback on localhost and [::1]": ["http://localhost:6274/oauth/callback", "http://[::1]:9/cb"],
    "Cursor (private-use scheme)": [CURSOR],
    "Cursor's full list": ["https://cursor.com/oauth/callback", "http://127.0.0.1:55511/callback", CURSOR],
    "a reverse-domain app scheme (RFC 8252 §7.1)": ["com.example.app:/oauth2redirect"],
  };
  for (const [name, uris] of Object.entries(accepted)) {
    it(`accepts ${name}`, async () => {
      const response = await registration(uris);
      expect(response.status, await response.clone().text()).toBe(201);
      expect(z.object({ redirect_uris: z.array(z.string()) }).parse(await response.json()).redirect_uris).toEqual(uris);
    });
  }

  const refused: Record<string, [uris: string[], path: string, why: RegExp]> = {
    "javascript:": [["javascript:alert(document.cookie)"], "redirect_uris[0]", /javascript: scheme/],
    "JavaScript: in another case": [["JavaScript:alert(1)"], "redirect_uris[0]", /javascript: scheme/],
    "data:": [["data:text/html,<script>alert(1)</script>"], "redirect_uris[0]", /data: scheme/],
    "file:": [["file:///etc/passwd"], "redirect_uris[0]", /file: scheme/],
    "vbscript:": [["vbscript:msgbox(1)"], "redirect_uris[0]", /vbscript: scheme/],
    "blob:": [["blob:https://claude.ai/0b3c"], "redirect_uris[0]", /blob: scheme/],
    "about:": [["about:blank"], "redirect_uris[0]", /about: scheme/],
    "http: off loopback": [["http://attacker.example/callback"], "redirect_uris[0]", /plain http off this computer/],
    "a dangerous URI listed beside a good one": [[claudeCallback, "javascript:alert(1)"], "redirect_uris[1]", /javascript: scheme/],
    "a URI with a fragment": [["https://claude.ai/cb#x"], "redirect_uris[0]", /fragment/],
    "a URI with a leading space": [[" javascript:alert(1)"], "redirect_uris[0]", /whitespace/],
    "a URI with a control character": [["https://claude.ai/api/\u0000cb"], "redirect_uris[0]", /control character/],
    "a URI with a backslash (parsers disagree on its host)": [["https://claude.ai\\@attacker.example/cb"], "redirect_uris[0]", /backslash/],
  };
  for (const [name, [uris, path, why]] of Object.entries(refused)) {
    it(`refuses ${name} with invalid_redirect_uri naming the URI, its JSON path and the fix`, async () => {
      const response = await registration(uris);
      expect(response.status).toBe(400);
      const body = refusal.parse(await response.json());
      expect(body.error_description).toContain(`${path} ${JSON.stringify(uris[Number(/\d+/.exec(path)?.[0])])}`);
      expect(body.error_description).toMatch(why);
      expect(body.error_description).toContain("Register an https URL, http://127.0.0.1:<port>/<path>");
    });
  }

  it("refuses a registration body over 1 MiB without reading past it, as the provider would", async () => {
    const discovery = await discover(worker, mcpUrl);
    const padding = "x".repeat(1024 * 1024);
    const response = await worker.fetch(discovery.metadata.registration_endpoint, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ client_name: padding, redirect_uris: [claudeCallback] }),
    });
    expect(response.status).toBe(413);
    expect(z.object({ error: z.literal("invalid_request") }).parse(await response.json()).error).toBe("invalid_request");
  });

  it("signs Cursor in: the consent page warns that access goes to an app on this computer, the code arrives at cursor:// and buys a token", async () => {
    const discovery = await discover(worker, mcpUrl);
    const clientId = await register(worker, discovery, [CURSOR]);
    const consent = await openConsent(worker, discovery, { clientId, redirectUri: CURSOR }, randomToken());
    const html = await consent.consent.text();
    expect(html).toContain("This sends access to an app on your computer (it opens <code>cursor:</code> links).");
    expect(html).toContain(CURSOR);

    const code = await authorizeThroughDev(worker, discovery, { clientId, redirectUri: CURSOR });
    expect(`${code.redirect.protocol}//${code.redirect.host}${code.redirect.pathname}`).toBe(CURSOR);
    const tokens = await exchangeCode(worker, discovery, clientId, CURSOR, code);
    const api = await worker.fetch(mcpUrl, { method: "POST", body: "{}", headers: { Authorization: `Bearer ${tokens.access_token}` } });
    expect(api.status).toBe(200);
  });

  it("shows no local-app warning for an https callback", async () => {
    const discovery = await discover(worker, mcpUrl);
    const clientId = await register(worker, discovery, [claudeCallback]);
    const consent = await openConsent(worker, discovery, { clientId, redirectUri: claudeCallback }, randomToken());
    expect(await consent.consent.text()).not.toContain("an app on your computer");
  });

  it("refuses at /authorize, with a plain page and no redirect, a browser scheme a client listed some other way", async () => {
    // createClient bypasses registration; the provider lets a client list such a URI beside a good one.
    const client = await worker
      .helpers(loopbackOrigin)
      .createClient({ redirectUris: [claudeCallback, "about:blank"], tokenEndpointAuthMethod: "none", clientName: "Listed" });
    const discovery = await discover(worker, mcpUrl);
    const consent = await openConsent(worker, discovery, { clientId: client.clientId, redirectUri: "about:blank" }, randomToken());
    expect(consent.consent.status).toBe(400);
    expect(consent.consent.headers.get("Location")).toBeNull();
    expect(await consent.consent.text()).toContain("uses the about: scheme");
  });
});
