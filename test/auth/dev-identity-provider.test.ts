import { describe, expect, it } from "vitest";
import { authTestWorker, devVars } from "./helpers/auth-test-worker";

describe("the dev identity provider only works on loopback in a local environment", () => {
  it("refuses every request served from a non-loopback host, naming the problem", async () => {
    const worker = authTestWorker(devVars);
    for (const url of [
      "https://slipsnisse.example.com/authorize",
      "https://slipsnisse.example.com/.well-known/oauth-authorization-server",
      "http://10.0.0.5:8787/mcp",
    ]) {
      const response = await worker.fetch(url);
      // A request that must not be served here (DNS rebinding looks like this): a client error.
      expect(response.status, url).toBe(403);
      const text = await response.text();
      expect(text, url).toContain("dev identity provider refuses");
      expect(text, url).toContain("IDP=dev is only for");
    }
  });

  it("accepts localhost and [::1] as loopback", async () => {
    const worker = authTestWorker(devVars);
    for (const origin of ["http://localhost:8787", "http://[::1]:8787"]) {
      const response = await worker.fetch(`${origin}/.well-known/oauth-authorization-server`);
      expect(response.status, origin).toBe(200);
    }
  });

  it("refuses to start when ENVIRONMENT is not local or test, even on loopback", async () => {
    const worker = authTestWorker({ ...devVars, ENVIRONMENT: "production" });
    const response = await worker.fetch("http://127.0.0.1:8787/authorize");
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(text).toContain("IDP is &#34;dev&#34; while ENVIRONMENT is &#34;production&#34;");
  });
});
