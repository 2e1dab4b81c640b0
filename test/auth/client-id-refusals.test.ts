import { describe, expect, it } from "vitest";
import { dashboardFetch, oauthVars } from "../dashboard/dashboard-test-client";

/**
 * Issue 35: client ids the server never issued (a Client ID Metadata Document URL, which MCP
 * 2026-07-28 clients prefer; a loopback URL; garbage) get a standard OAuth error through the
 * whole Worker (src/index.ts), never a 500 and never a stack trace: `invalid_client` at /token
 * (RFC 6749 §5.2), the unknown-client page at /authorize, which redirects nowhere.
 */
const CALLBACK = "https://client.example/callback";
const CLIENT_IDS = [
  "https://client.example/oauth/client-metadata.json",
  "https://client.example/",
  "http://127.0.0.1/client.json",
  "http://127.0.0.1:9/x",
  "not a client",
  "%00",
  "\u0000\u0001",
  "client:../../grant",
  "x".repeat(600),
  `https://client.example/${"a".repeat(2_000)}`,
];

function noTrace(text: string): void {
  for (const leak of ["    at ", "global_fetch_strictly_public", "Error:", "node_modules", ".js:"])
    expect(text, `body carries ${JSON.stringify(leak)}`).not.toContain(leak);
}

function authorizeUrl(clientId: string): string {
  const query = new URLSearchParams({
    response_type: "code",
    client_id: clientId,
    redirect_uri: CALLBACK,
    code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    code_challenge_method: "S256",
    state: "state-1",
  });
  return `/authorize?${query}`;
}

describe("client ids that were never issued (issue 35)", () => {
  for (const clientId of CLIENT_IDS) {
    const label = JSON.stringify(clientId.slice(0, 60));
    it(`/token answers ${label} with invalid_client as JSON`, async () => {
      const forms: Array<Record<string, string>> = [
        { grant_type: "authorization_code", code: "abc:def:ghi", code_verifier: "v".repeat(43), redirect_uri: CALLBACK, client_id: clientId },
        { grant_type: "refresh_token", refresh_token: "abc:def:ghi", client_id: clientId },
      ];
      for (const body of forms) {
        const response = await dashboardFetch("/token", {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams(body),
        });
        const text = await response.text();
        expect([400, 401], text).toContain(response.status);
        expect(response.headers.get("content-type")).toContain("application/json");
        expect((JSON.parse(text) as { error?: string }).error).toBe("invalid_client");
        noTrace(text);
      }
      const basic = await dashboardFetch("/token", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", authorization: `Basic ${btoa(`${encodeURIComponent(clientId)}:secret`)}` },
        body: new URLSearchParams({ grant_type: "authorization_code", code: "abc:def:ghi", code_verifier: "v".repeat(43), redirect_uri: CALLBACK }),
      });
      const basicText = await basic.text();
      expect(basic.status, basicText).toBe(401);
      expect((JSON.parse(basicText) as { error?: string }).error).toBe("invalid_client");
      noTrace(basicText);
    });

    it(`/authorize shows ${label} the unknown-client page and redirects nowhere`, async () => {
      const response = await dashboardFetch(authorizeUrl(clientId));
      const text = await response.text();
      expect(response.status, text).toBe(400);
      expect(response.headers.get("location")).toBeNull();
      expect(response.headers.get("content-type")).toContain("text/html");
      expect(text).toContain("This sign-in cannot continue");
      expect(text).not.toContain(CALLBACK);
      noTrace(text);
    });
  }

  it("an unknown plain client id gets the very same answers (the baseline the others are held to)", async () => {
    const page = await dashboardFetch(authorizeUrl("unknownclient0001"));
    expect(page.status).toBe(400);
    await expect(page.text()).resolves.toContain("This sign-in cannot continue");
    const token = await dashboardFetch("/token", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "authorization_code", code: "a:b:c", code_verifier: "v".repeat(43), client_id: "unknownclient0001" }),
    });
    expect(token.status).toBe(401);
    expect(((await token.json()) as { error?: string }).error).toBe("invalid_client");
  });

  it("the discovery document offers Client ID Metadata Documents (fetched through the guarded fetch, test/auth/client-metadata-documents.test.ts)", async () => {
    const response = await dashboardFetch("/.well-known/oauth-authorization-server", {}, oauthVars);
    const metadata = (await response.json()) as { client_id_metadata_document_supported?: boolean };
    expect(metadata.client_id_metadata_document_supported).toBe(true);
  });
});
