import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { loopbackDevUser } from "../../src/auth/loopback-dev-user";

const withVars = (vars: Partial<Record<"ENVIRONMENT" | "AUTH", string>>) => ({ ...env, ...vars }) as Env;
const at = (url: string) => new Request(url);

describe("unauthenticated local access (AUTH=none)", () => {
  it.each(["http://127.0.0.1:8787/mcp", "http://localhost:8787/mcp", "http://[::1]:8787/mcp", "http://127.0.0.2/mcp"])(
    "signs in the dev admin for a local environment on loopback: %s",
    (url) => {
      expect(loopbackDevUser(at(url), withVars({ ENVIRONMENT: "local", AUTH: "none" }))).toEqual({ userId: "local:dev", login: "dev", role: "admin" });
    },
  );

  it.each([
    ["a deployed environment", "http://127.0.0.1/mcp", { ENVIRONMENT: "production", AUTH: "none" }],
    ["OAuth configured", "http://127.0.0.1/mcp", { ENVIRONMENT: "local", AUTH: "oauth" }],
    ["a public host", "https://slipsnisse.example.com/mcp", { ENVIRONMENT: "local", AUTH: "none" }],
    ["a private address", "http://10.0.0.5/mcp", { ENVIRONMENT: "local", AUTH: "none" }],
    ["a name that only starts like localhost", "http://localhost.example.com/mcp", { ENVIRONMENT: "local", AUTH: "none" }],
  ])("refuses %s", (_label, url, vars) => {
    expect(loopbackDevUser(at(url), withVars(vars))).toBeNull();
  });
});
