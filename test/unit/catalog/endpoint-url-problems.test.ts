import { describe, expect, it } from "vitest";
import { parseCatalog } from "../../../src/catalog/parse-catalog";
import { defaultSkill, firstExpert, problemAt, problemsOf, validCatalog } from "./catalog-fixtures";

const BASE_URL = "$.skills.default.experts[0].base_url";

function withBaseUrl(baseUrl: string) {
  const catalog = validCatalog();
  Object.assign(firstExpert(catalog), { provider: "openai-compatible", base_url: baseUrl, model: "m" });
  return catalog;
}

describe("an expert's base_url is checked like a server url", () => {
  for (const url of ["ftp://models.example.com/v1", "javascript:alert(1)", "file:///etc/passwd"]) {
    it(`${url} is refused at base_url with an https example`, () => {
      const problem = problemAt(problemsOf(withBaseUrl(url)), BASE_URL);
      expect(problem.message).toContain("not a valid http(s) URL");
      expect(problem.message).toContain("model endpoint");
      expect(problem.fix).toContain("https://");
      expect(problemsOf(withBaseUrl(url)).filter((p) => p.path === BASE_URL)).toHaveLength(1);
    });
  }

  it("credentials in base_url are refused without echoing them, pointing at api_key_secret", () => {
    const problems = problemsOf(withBaseUrl("https://me:hunter2@models.example.com/v1"));
    const problem = problemAt(problems, BASE_URL);
    expect(problem.message).toContain("credentials in the URL");
    expect(problem.fix).toContain("api_key_secret");
    expect(JSON.stringify(problems)).not.toContain("hunter2");
  });

  for (const [url, reason] of [
    ["https://10.0.0.5/v1", "private address"],
    ["https://169.254.169.254/latest", "link-local"],
    ["https://metadata.google.internal/v1", "cloud metadata host"],
    ["http://models.example.com/v1", "plain http"],
  ] as const) {
    it(`${url} is refused in every environment (${reason})`, () => {
      const problem = problemAt(problemsOf(withBaseUrl(url)), BASE_URL);
      expect(problem.message).toContain(reason);
      expect(problem.fix).toMatch(/public https/);
    });
  }

  for (const url of ["https://openrouter.ai/api/v1", "http://127.0.0.1:11434/v1", "http://localhost:8080/v1"]) {
    it(`${url} is accepted (loopback is for local development, checked when called)`, () => {
      expect(parseCatalog(withBaseUrl(url))).toMatchObject({ ok: true });
    });
  }

  it("a server url gets the same refusals (credentials, private address), a binding's url only names the path", () => {
    const catalog = validCatalog();
    defaultSkill(catalog).servers = {
      docs: { url: "https://admin:pw@docs.example.com/mcp" },
      fs: { url: "https://192.168.1.10/mcp" },
      self: { binding: "SELF", url: "http://slipsnisse.internal/mcp" },
    };
    const problems = problemsOf(catalog);
    expect(problemAt(problems, "$.skills.default.servers.docs.url").message).toContain("credentials in the URL");
    expect(problemAt(problems, "$.skills.default.servers.fs.url").message).toContain("private address");
    expect(problems.filter((p) => p.path.startsWith("$.skills.default.servers.self"))).toEqual([]);
    expect(JSON.stringify(problems)).not.toContain("admin:pw");
  });
});
