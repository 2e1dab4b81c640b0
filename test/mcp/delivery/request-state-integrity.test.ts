import { env, runInDurableObject } from "cloudflare:test";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { UserProps } from "../../../src/auth/user-props";
import { base64Url } from "../../../src/base64url";
import { replaceCatalog } from "../../../src/catalog/catalog-service";
import { setModelResolverForTests } from "../../../src/experts/models/model-resolver-override";
import { sessionStub } from "../../../src/experts/session/session-name";
import { taggedBase } from "../../fixtures/fixture-stats-client";
import { scriptedModel } from "../../support/workers/scripted-model";
import { expertOf } from "../../support/workers/session-helpers";
import { appFetchAs, selfFetch } from "../mcp-test-client";

/**
 * Issue 37: the `requestState` of a 2026-07-28 input_required answer is a handle the server
 * issued to this user for this expert, once, for a while. A real SDK v2 client runs the round
 * trip; its retry is held back and sent again as it was, altered, late, to another expert and by
 * another user (whose own session never issued it): each is refused with a clear tool error, and only the genuine retry resumes the run.
 */
const fixtures = inject("fixtureServers");
const echo = taggedBase(fixtures.echo, "request-state");
const skill = "request-state";
const url = `http://localhost/s/${skill}/mcp`;
/** The loopback dev user that selfFetch signs in as (src/auth/loopback-dev-user.ts). */
const LOOPBACK_USER_ID = "local:dev";

let model = scriptedModel([{ text: "unscripted" }]);

interface HeldRetry {
  body: { params: { name: string; requestState?: string } & Record<string, unknown> } & Record<string, unknown>;
  headers: Headers;
  handle: string;
}

/** Runs the cleaner until its approval is asked, lets the SDK client answer, and holds the retry it sends. */
async function heldRetry(): Promise<HeldRetry> {
  model = scriptedModel([{ calls: [{ name: "echo__erase", input: { record: "r7" } }] }, { text: "Resumed and finished." }]);
  let held: HeldRetry | undefined;
  const holding = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    const text = request.method === "POST" ? await request.clone().text() : "";
    if (text.includes('"requestState"')) {
      const body = JSON.parse(text) as HeldRetry["body"];
      held = { body, headers: new Headers(request.headers), handle: String(body.params.requestState) };
      return new Response("held back by the test", { status: 503 });
    }
    return selfFetch(request);
  };
  const client = new Client(
    { name: "request-state-test", version: "0.0.0" },
    { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  client.setRequestHandler("elicitation/create", async () => ({ action: "accept", content: { approve: true } }));
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: holding }));
  await client.callTool({ name: "cleaner", arguments: { query: "Erase r7." } }).catch(() => undefined);
  await client.close();
  if (!held) throw new Error("the client sent no retry carrying requestState");
  return held;
}

/** Sends a held retry (changed by `change`) as the test's loopback user, or as `user`; the tool result's text. */
async function send(retry: HeldRetry, change: (body: HeldRetry["body"]) => void = () => {}, user?: UserProps): Promise<string> {
  const body = structuredClone(retry.body);
  change(body);
  const init = { method: "POST", headers: retry.headers, body: JSON.stringify(body) };
  const response = user ? await appFetchAs(user, url, init) : await selfFetch(url, init);
  const text = await response.text();
  const json = text.trimStart().startsWith("{") ? text : (text.split("\n").find((line) => line.startsWith("data: {")) ?? "").slice("data: ".length);
  const message = JSON.parse(json) as { result?: { content?: Array<{ text?: string }>; isError?: boolean }; error?: unknown };
  return (message.result?.content ?? []).map((part) => part.text ?? "").join("\n") || JSON.stringify(message);
}

async function digest(text: string): Promise<string> {
  return base64Url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text))));
}

describe("requestState integrity (2026-07-28 input_required)", () => {
  beforeAll(async () => {
    const catalog = {
      skills: {
        [skill]: {
          servers: { echo: { url: `${echo}/mcp`, transport: "streamable-http" } },
          experts: [expertOf("cleaner", { echo: ["erase"] }, { max_steps: 3 }), expertOf("other", { echo: ["erase"] }, { max_steps: 3 })],
        },
      },
    };
    expect((await replaceCatalog(env, catalog, "test")).ok).toBe(true);
    setModelResolverForTests(() => model);
  });
  afterAll(() => setModelResolverForTests(undefined));

  it("hands the client an opaque handle, not the state", async () => {
    const retry = await heldRetry();
    expect(retry.handle).toMatch(/^rs1\.[A-Za-z0-9_-]{43}$/);
    expect(retry.handle).not.toContain("thread");
  });

  it("the genuine retry resumes the run once; the same retry again is refused as used", async () => {
    const retry = await heldRetry();
    expect(await send(retry)).toContain("Resumed and finished.");
    const again = await send(retry);
    expect(again).toContain("requestState was refused: it was already used once");
    expect(again).not.toContain("Resumed");
  });

  it("an altered handle, or a state the client wrote itself, is refused as never issued", async () => {
    const retry = await heldRetry();
    const flipped = `${retry.handle.slice(0, -1)}${retry.handle.endsWith("A") ? "B" : "A"}`;
    expect(await send(retry, (body) => (body.params.requestState = flipped))).toContain("it was never issued to you, or it was altered");
    const forged = JSON.stringify({ v: 1, thread: "t-any", kind: "approval" });
    expect(await send(retry, (body) => (body.params.requestState = forged))).toContain("it was never issued to you, or it was altered");
    // Neither attempt used the genuine handle up.
    expect(await send(retry)).toContain("Resumed and finished.");
  });

  it("another user's retry with the handle is refused, and the owner's still works", async () => {
    const retry = await heldRetry();
    const mallory: UserProps = { userId: "dev-mallory", login: "mallory", role: "member" };
    const stolen = await send(retry, undefined, mallory);
    // Mallory's call reaches her own session, which never issued the handle: it says no more than that.
    expect(stolen).toContain("it was never issued to you, or it was altered");
    expect(stolen).not.toContain("r7");
    expect(await send(retry)).toContain("Resumed and finished.");
  });

  it("a handle sent to another expert is refused", async () => {
    const retry = await heldRetry();
    // The 2026-07-28 Mcp-Name header must agree with the body's tool name.
    const headers = new Headers(retry.headers);
    headers.set("mcp-name", "other");
    expect(await send({ ...retry, headers }, (body) => (body.params.name = "other"))).toContain("it was issued for another expert or skill");
  });

  it("an expired handle is refused", async () => {
    const retry = await heldRetry();
    const key = await digest(retry.handle);
    await runInDurableObject(sessionStub(env, skill, LOOPBACK_USER_ID), async (_session, state) => {
      state.storage.sql.exec("UPDATE request_states SET expires_at = ? WHERE handle_sha256 = ?", Date.now() - 1, key);
    });
    expect(await send(retry)).toContain("requestState was refused: it has expired");
  });
});
