import { APICallError, RetryError } from "ai";
import { describe, expect, it } from "vitest";
import { describeModelError } from "../../../src/experts/models/describe-model-error";
import { makeExpert } from "../../support/expert-fixture";

function apiError(statusCode: number | undefined, message = `HTTP ${statusCode}`): APICallError {
  return new APICallError({ message, url: "https://api.example.test/v1", requestBodyValues: {}, statusCode, isRetryable: false });
}

const google = makeExpert({ provider: "google" });
const local = makeExpert({ provider: "openai-compatible", base_url: "http://127.0.0.1:11434/v1", api_key_secret: "OLLAMA_KEY", model: "llama3" });

describe("describeModelError", () => {
  it.each([
    [401, "model-auth-rejected", "GOOGLE_GENERATIVE_AI_API_KEY"],
    [403, "model-auth-rejected", "GOOGLE_GENERATIVE_AI_API_KEY"],
    [404, "model-not-found", '"model"'],
    [429, "model-rate-limited", "HTTP 429"],
    [503, "model-provider-failed", "HTTP 503"],
  ])("maps HTTP %i to %s", (status, kind, mentions) => {
    const described = describeModelError(apiError(status), google);
    expect(described.kind).toBe(kind);
    expect(described.toolMessage).toContain('expert "research"');
    expect(described.toolMessage).toContain(mentions);
  });

  it("looks through a RetryError to the last attempt", () => {
    const retry = new RetryError({ message: "Failed after 3 attempts", reason: "maxRetriesExceeded", errors: [apiError(500), apiError(429)] });
    expect(describeModelError(retry, google).kind).toBe("model-rate-limited");
  });

  it("names the openai-compatible secret for a rejected key", () => {
    expect(describeModelError(apiError(401), local).toolMessage).toContain("OLLAMA_KEY");
  });

  it("turns connection failures into 'could not reach <base_url>'", () => {
    const refused = new TypeError("fetch failed", { cause: new Error("connect ECONNREFUSED 127.0.0.1:11434") });
    const described = describeModelError(refused, local);
    expect(described.kind).toBe("model-unreachable");
    expect(described.toolMessage).toContain("could not reach http://127.0.0.1:11434/v1");
    expect(described.toolMessage).toContain("Is the server running?");
    expect(describeModelError(apiError(undefined, "Cannot connect to API: Network connection lost."), local).kind).toBe("model-unreachable");
  });

  it("recognises the local AI binding failure", () => {
    const described = describeModelError(new Error("Binding AI needs to be run remotely"), makeExpert());
    expect(described.kind).toBe("workers-ai-needs-remote");
    expect(described.toolMessage).toContain("wrangler login");
  });

  it("never repeats a key-like string from a provider message", () => {
    const leaky = apiError(500, "upstream said: Authorization: Bearer sk-live-abcdef1234567890 rejected for ?key=AIzaSyA1234567890abcdefghijkl");
    const text = describeModelError(leaky, local).toolMessage;
    expect(text).not.toContain("sk-live-abcdef1234567890");
    expect(text).not.toContain("AIzaSyA1234567890abcdefghijkl");
    expect(text).toContain("[redacted]");
  });
});
