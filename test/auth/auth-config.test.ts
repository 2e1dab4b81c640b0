import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { readAuthConfig } from "../../src/auth/auth-config";
import { AuthConfigError } from "../../src/auth/auth-errors";
import { authTestWorker } from "./helpers/auth-test-worker";

function configError(vars: Parameters<typeof readAuthConfig>[1]): AuthConfigError {
  try {
    readAuthConfig(env, vars);
  } catch (error) {
    if (error instanceof AuthConfigError) return error;
    throw error;
  }
  throw new Error("expected an AuthConfigError");
}

describe("auth configuration names what is missing and how to set it", () => {
  it("names IDP when it is unset", () => {
    const error = configError({});
    expect(error.variable).toBe("IDP");
    expect(error.toolMessage).toContain('IDP = "github"');
  });

  it("names a missing secret and says to use wrangler secret put", () => {
    const error = configError({ IDP: "github", GITHUB_CLIENT_ID: "id", ALLOWED_USERS: "alice" });
    expect(error.variable).toBe("GITHUB_CLIENT_SECRET");
    expect(error.fix).toContain("wrangler secret put GITHUB_CLIENT_SECRET");
  });

  it("refuses GitHub and OIDC without any membership rule, so not everyone gets in", () => {
    expect(configError({ IDP: "github", GITHUB_CLIENT_ID: "id", GITHUB_CLIENT_SECRET: "s" }).variable).toBe("GITHUB_ORG");
    expect(configError({ IDP: "oidc", OIDC_ISSUER: "https://idp.example.com", OIDC_CLIENT_ID: "c" }).variable).toBe("ALLOWED_EMAIL_DOMAINS");
  });

  it("needs a membership token to re-check a GitHub org at refresh", () => {
    const error = configError({ IDP: "github", GITHUB_CLIENT_ID: "id", GITHUB_CLIENT_SECRET: "s", GITHUB_ORG: "acme" });
    expect(error.variable).toBe("GITHUB_MEMBERSHIP_TOKEN");
  });

  it("reads ALLOWED_ORIGINS as exact browser origins and names a malformed entry", () => {
    const dev = { IDP: "dev", DEV_USER: "a", ENVIRONMENT: "test" } as const;
    const config = readAuthConfig(env, { ...dev, ALLOWED_ORIGINS: " https://claude.ai, https://Tools.Example.com:8443/ ,http://localhost:6274" });
    expect(config.ALLOWED_ORIGINS).toEqual(["https://claude.ai", "https://tools.example.com:8443", "http://localhost:6274"]);
    for (const bad of ["claude.ai", "http://claude.ai", "https://claude.ai/api", "https://*.claude.ai", "https://claude.ai?x=1"]) {
      const error = configError({ ...dev, ALLOWED_ORIGINS: `https://ok.example,${bad}` });
      expect(error.variable).toBe("ALLOWED_ORIGINS");
      expect(error.message).toContain(JSON.stringify(bad));
      expect(error.fix).toContain('ALLOWED_ORIGINS = "https://claude.ai"');
    }
  });

  it("refuses TTLs under KV's 60 second floor", () => {
    expect(configError({ IDP: "dev", DEV_USER: "a", ENVIRONMENT: "test", ACCESS_TOKEN_TTL: "5" }).variable).toBe("ACCESS_TOKEN_TTL");
  });

  it("answers every request with a page naming the var when config is broken, never a token", async () => {
    const worker = authTestWorker({ IDP: "oidc", OIDC_CLIENT_ID: "c", ALLOWED_EMAIL_DOMAINS: "example.com" });
    const response = await worker.fetch("https://slipsnisse.example.com/token", { method: "POST" });
    expect(response.status).toBe(500);
    expect(await response.text()).toContain("OIDC_ISSUER is missing");
  });

  it("refuses a plain-http identity provider URL unless it is on loopback", () => {
    const vars = { IDP: "oidc", OIDC_CLIENT_ID: "c", ALLOWED_EMAIL_DOMAINS: "example.com" } as const;
    const error = configError({ ...vars, OIDC_ISSUER: "http://idp.example.com" });
    expect(error.variable).toBe("OIDC_ISSUER");
    expect(error.message).toContain("must use https");
    expect(readAuthConfig(env, { ...vars, OIDC_ISSUER: "http://127.0.0.1:9000/" }).idp).toMatchObject({ OIDC_ISSUER: "http://127.0.0.1:9000" });
  });

  it("parses lists, lower-cased", () => {
    const config = readAuthConfig(env, { IDP: "dev", DEV_USER: "a", ENVIRONMENT: "test", ADMIN_USERS: " Alice, bob@Example.com ,," });
    expect(config.ADMIN_USERS).toEqual(["alice", "bob@example.com"]);
  });
});
