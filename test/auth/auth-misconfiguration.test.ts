import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { authTestWorker, devVars, loopbackOrigin } from "./helpers/auth-test-worker";

const misconfigured = z.object({ error: z.literal("server_error"), error_description: z.string() });

/** The endpoints OAuth and MCP clients parse as JSON; a person's browser gets the others. */
const jsonRoutes: [method: string, path: string][] = [
  ["POST", "/register"],
  ["POST", "/token"],
  ["GET", "/.well-known/oauth-authorization-server"],
  ["GET", "/.well-known/oauth-protected-resource"],
  ["POST", "/mcp"],
  ["POST", "/s/devops/mcp"],
  ["GET", "/admin/api/skills"],
];
const pageRoutes: [method: string, path: string][] = [
  ["GET", "/authorize?client_id=x&redirect_uri=https%3A%2F%2Fclaude.ai%2Fcb&response_type=code"],
  ["GET", "/auth/callback?state=x&code=y"],
  ["GET", "/"],
];

async function expectJsonNaming(response: Response, route: string, variable: string, fix: string): Promise<void> {
  expect(response.status, route).toBe(500);
  expect(response.headers.get("Content-Type"), route).toMatch(/^application\/json/);
  expect(response.headers.get("Cache-Control"), route).toBe("no-store");
  const body = misconfigured.parse(await response.json());
  expect(body.error_description, route).toContain(`Slipsnisse is misconfigured: Auth configuration: ${variable}`);
  expect(body.error_description, route).toContain(fix);
}

async function expectPageNaming(response: Response, route: string, variable: string, fix: string): Promise<void> {
  expect(response.status, route).toBe(500);
  expect(response.headers.get("Content-Type"), route).toMatch(/^text\/html/);
  const html = (await response.text()).replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)));
  expect(html, route).toContain("<h1>Slipsnisse is misconfigured</h1>");
  expect(html, route).toContain(`Auth configuration: ${variable}`);
  expect(html, route).toContain(fix);
}

describe("a misconfigured server answers every route with what to fix, never a library error", () => {
  it("ACCESS_TOKEN_TTL under 60: JSON naming the var and its fix at the OAuth and MCP endpoints, the plain page elsewhere", async () => {
    const worker = authTestWorker({ ...devVars, ACCESS_TOKEN_TTL: "30" });
    const fix = 'add ACCESS_TOKEN_TTL = "3600" under [vars]';
    for (const [method, path] of jsonRoutes) {
      const body =
        method === "POST" && path === "/register"
          ? JSON.stringify({ redirect_uris: ["https://claude.ai/api/mcp/auth_callback"] })
          : method === "POST"
            ? "{}"
            : undefined;
      await expectJsonNaming(
        await worker.fetch(`${loopbackOrigin}${path}`, { method, body, headers: { "Content-Type": "application/json" } }),
        path,
        "ACCESS_TOKEN_TTL is invalid",
        fix,
      );
    }
    for (const [method, path] of pageRoutes) {
      await expectPageNaming(await worker.fetch(`${loopbackOrigin}${path}`, { method }), path, "ACCESS_TOKEN_TTL is invalid", fix);
    }
  });

  it("through the Worker's own entry (SELF, the test env has no IDP): /register, /token and discovery answer JSON naming IDP", async () => {
    const origin = "https://slipsnisse.example.com";
    const register = await SELF.fetch(`${origin}/register`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ redirect_uris: [`${origin}/cb`] }),
    });
    await expectJsonNaming(register, "/register", "IDP is missing", 'add IDP = "github" under [vars]');
    await expectJsonNaming(await SELF.fetch(`${origin}/token`, { method: "POST" }), "/token", "IDP is missing", "IDP = ");
    await expectJsonNaming(await SELF.fetch(`${origin}/.well-known/oauth-authorization-server`), "/.well-known", "IDP is missing", "IDP = ");
    await expectPageNaming(await SELF.fetch(`${origin}/authorize`), "/authorize", "IDP is missing", "IDP = ");
  });
});
