import { env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import type { AppEnv } from "../../../src/env";
import { MissingBaseUrlError, MissingModelApiKeyError } from "../../../src/experts/models/model-errors";
import { resolveModel } from "../../../src/experts/models/model-registry";
import { setModelResolverForTests } from "../../../src/experts/models/model-resolver-override";
import { runExpert } from "../../../src/experts/run/run-expert";
import { makeExpert, makePolicy } from "../../support/expert-fixture";
import { FakeToolSource } from "../../support/fake-tool-source";
import { scriptedModel } from "../../support/workers/scripted-model";

function modelInfo(model: unknown): { provider: string; modelId: string } {
  if (typeof model !== "object" || model === null || !("provider" in model) || !("modelId" in model)) throw new Error("not a model object");
  return { provider: String(model.provider), modelId: String(model.modelId) };
}

const noTools = () => new FakeToolSource({ docs: { search: {}, read: {} } });

afterEach(() => setModelResolverForTests(undefined));

describe("resolveModel", () => {
  it("defaults to Workers AI with the default model over the AI binding", async () => {
    const model = await resolveModel(makeExpert(), env);
    expect(modelInfo(model).modelId).toBe("@cf/meta/llama-3.3-70b-instruct-fp8-fast");
    expect(modelInfo(model).provider).toMatch(/workers-?ai/i);
  });

  it("google: a missing key is an error that says which secret and how to set it", async () => {
    const error = await resolveModel(makeExpert({ provider: "google" }), env).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MissingModelApiKeyError);
    const message = (error as MissingModelApiKeyError).toolMessage;
    expect(message).toContain('Expert "research"');
    expect(message).toContain("wrangler secret put GOOGLE_GENERATIVE_AI_API_KEY");
    expect(message).toContain(".dev.vars");
  });

  it("google: with the key set it builds gemini-2.5-flash by default", async () => {
    const withKey: AppEnv = { ...env, GOOGLE_GENERATIVE_AI_API_KEY: "test-key-not-real" };
    const model = await resolveModel(makeExpert({ provider: "google" }), withKey);
    expect(modelInfo(model)).toMatchObject({ modelId: "gemini-2.5-flash" });
    expect(modelInfo(model).provider).toMatch(/google/);
  });

  it("openai-compatible: no base_url is an error with the fix", async () => {
    const error = await resolveModel(makeExpert({ provider: "openai-compatible", model: "llama3" }), env).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MissingBaseUrlError);
    expect((error as MissingBaseUrlError).toolMessage).toContain("base_url");
  });

  it("openai-compatible: a named key secret that is not set is an error naming it", async () => {
    const expert = makeExpert({ provider: "openai-compatible", base_url: "http://127.0.0.1:11434/v1", api_key_secret: "OLLAMA_KEY" });
    const error = await resolveModel(expert, env).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MissingModelApiKeyError);
    expect((error as MissingModelApiKeyError).toolMessage).toContain("wrangler secret put OLLAMA_KEY");
  });

  it("openai-compatible: an endpoint nobody listens on gives 'could not reach <base_url>: is the server running?'", async () => {
    const expert = makeExpert({ provider: "openai-compatible", model: "llama3", base_url: "http://127.0.0.1:1/v1", budget: { timeout_ms: 20_000 } });
    const model = await resolveModel(expert, env);
    const result = await runExpert({ expert, toolPolicy: makePolicy(), args: { query: "q" }, model, tools: noTools() });
    expect(result.outcome).toBe("error");
    expect(result.error?.kind).toBe("model-unreachable");
    expect(result.text).toContain("could not reach http://127.0.0.1:1/v1");
    expect(result.text).toContain("Is the server running?");
  }, 30_000);

  describe("openai-compatible: base_url is guarded like a downstream server URL", () => {
    const production: Env = { ...env, ENVIRONMENT: "production" };
    const cases: Array<[string, Env, string]> = [
      ["https://10.0.0.5/v1", production, "private address"],
      ["https://169.254.169.254/v1", production, "link-local"],
      ["http://127.0.0.1:11434/v1", production, "loopback address"],
      // A catalog stored before base_url was checked at validation still cannot reach these.
      ["ftp://models.example.com/v1", env, "ftp: is not http(s)"],
      ["https://key:hunter2@models.example.com/v1", env, "credentials in the URL"],
    ];
    for (const [baseUrl, target, reason] of cases) {
      it(`${baseUrl} (${target.ENVIRONMENT}) is refused with a tool error naming the model endpoint, before any request`, async () => {
        const expert = { ...makeExpert({ provider: "openai-compatible", model: "llama3" }), base_url: baseUrl };
        const model = await resolveModel(expert, target);
        const result = await runExpert({ expert, toolPolicy: makePolicy(), args: { query: "q" }, model, tools: noTools() });
        expect(result).toMatchObject({ outcome: "error", error: { kind: "unsafe-model-endpoint" } });
        expect(result.text).toContain('Expert "research" has an unsafe model endpoint');
        expect(result.text).toContain(reason);
        expect(result.text).toContain("base_url");
        expect(result.text).not.toMatch(/retry later/i);
        expect(result.text).not.toContain("hunter2");
      });
    }
  });

  it("workers-ai in a local session: the binding error says to run remotely or use another provider", async () => {
    const expert = makeExpert();
    const model = await resolveModel(expert, env);
    const result = await runExpert({ expert, toolPolicy: makePolicy(), args: { query: "q" }, model, tools: noTools() });
    expect(result.outcome).toBe("error");
    expect(result.error?.kind).toBe("workers-ai-needs-remote");
    expect(result.text).toContain("wrangler login");
    expect(result.text).toContain("npm run start:remote");
  }, 30_000);

  it("the test seam swaps in a scripted model only when ENVIRONMENT is test", async () => {
    const mock = scriptedModel([{ text: "scripted" }], { modelId: "scripted-model" });
    setModelResolverForTests(() => mock);
    expect(await resolveModel(makeExpert(), env)).toBe(mock);
    const production = await resolveModel(makeExpert(), { ...env, ENVIRONMENT: "production" });
    expect(production).not.toBe(mock);
    expect(modelInfo(production).modelId).toBe("@cf/meta/llama-3.3-70b-instruct-fp8-fast");
  });

  it("reuses a built model for the same configuration and key, and builds anew when either changes", async () => {
    const withKey = { ...env, OLLAMA_KEY: "key-one" } as AppEnv;
    const expert = makeExpert({ provider: "openai-compatible", model: "llama3", base_url: "http://127.0.0.1:11434/v1", api_key_secret: "OLLAMA_KEY" });
    const first = await resolveModel(expert, withKey);
    expect(await resolveModel({ ...expert }, withKey)).toBe(first);
    expect(await resolveModel({ ...expert, base_url: "http://127.0.0.1:11435/v1" }, withKey)).not.toBe(first);
    expect(await resolveModel({ ...expert, model: "llama4" }, withKey)).not.toBe(first);
    Object.assign(withKey, { OLLAMA_KEY: "key-two" });
    const rotated = await resolveModel(expert, withKey);
    expect(rotated).not.toBe(first);
    expect(modelInfo(rotated).modelId).toBe("llama3");
  });
});
