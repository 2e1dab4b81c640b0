import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, inject, it, vi, type MockInstance } from "vitest";
import type { UserProps } from "../../../src/auth/user-props";
import { ConnectionOAuthProvider } from "../../../src/downstream/connections/connection-oauth-provider";
import { connectionsStub, type ConnectionTarget } from "../../../src/downstream/connections/connection-target";
import { TokenCipher } from "../../../src/downstream/connections/token-cipher";
import type { FinishAnswer, StartAnswer } from "../../../src/downstream/connections/user-connections";
import { sessionStub } from "../../../src/experts/session/session-name";
import type { IssuerTagConfig, SeenRequest } from "../../fixtures/oauth-issuer-types";
import { expertOf } from "../../support/workers/session-helpers";
import { useCatalogWithScriptedModels } from "../../support/workers/scripted-model";

const fixtures = inject("fixtureServers");
/** The Worker secrets PIN_CLIENT_ID and PIN_CLIENT_SECRET (vitest.config.ts). */
const CLIENT_ID = "pin client/1";
const CLIENT_SECRET = "pin s3cr/t+x!~(7)'q";
const CALLBACK = "http://127.0.0.1:8787/connect/callback";

/**
 * Every encoding the secret can travel or be echoed in, computed here rather than by the code
 * under test: raw, percent-encoded, form-encoded, and the Basic credentials as the MCP SDK
 * builds them (base64 of `id:secret`) and as RFC 6749 §2.3.1 spells them.
 */
const formEncode = (value: string) => new URLSearchParams({ v: value }).toString().slice(2);
const FORMS = [
  CLIENT_SECRET,
  encodeURIComponent(CLIENT_SECRET),
  formEncode(CLIENT_SECRET),
  btoa(`${CLIENT_ID}:${CLIENT_SECRET}`),
  btoa(`${encodeURIComponent(CLIENT_ID)}:${encodeURIComponent(CLIENT_SECRET)}`),
  btoa(`${formEncode(CLIENT_ID)}:${formEncode(CLIENT_SECRET)}`),
];

function leaks(text: string): string[] {
  return FORMS.filter((form) => text.includes(form));
}

function tagOf(label: string): string {
  return `${label}-${crypto.randomUUID().slice(0, 8)}`;
}

async function configure(origin: string, tag: string, config: Partial<IssuerTagConfig>): Promise<void> {
  const response = await fetch(`${origin}/t/${tag}/configure`, { method: "POST", body: JSON.stringify(config) });
  expect(response.status).toBe(204);
}

/** Everything an origin received under `tag`, as one text to search. */
async function received(origin: string, tag: string): Promise<{ text: string; posts: number }> {
  const requests = (await (await fetch(`${origin}/t/${tag}/requests`)).json()) as SeenRequest[];
  return { text: JSON.stringify(requests), posts: requests.filter((request) => request.method === "POST").length };
}

const team = () => connectionsStub(env, { kind: "team" });

/** A team server whose token Slipsnisse fetches with the pre-registered client's id and secret. */
function machine(tag: string, overrides: Partial<ConnectionTarget> = {}): ConnectionTarget {
  return {
    serverId: "crm",
    skill: "pins",
    url: `${fixtures.issuer}/t/${tag}/mcp`,
    connection: "team",
    grant: "client_credentials",
    clientIdSecret: "PIN_CLIENT_ID",
    clientSecretSecret: "PIN_CLIENT_SECRET",
    ...overrides,
  };
}

/** A per-member server that signs members in in the browser as the pre-registered client. */
function mailbox(tag: string): ConnectionTarget {
  return {
    serverId: "mail",
    skill: "pins",
    url: `${fixtures.issuer}/t/${tag}/mcp`,
    connection: "user",
    clientIdSecret: "PIN_CLIENT_ID",
    clientSecretSecret: "PIN_CLIENT_SECRET",
  };
}

/**
 * A member's browser sign-in: the connect flow starts (discovery, the authorization URL), the
 * authorization server approves at once and the browser comes back to /connect/callback with a
 * code and the flow's state, which UserConnections redeems at the token endpoint.
 */
async function signIn(userId: string, target: ConnectionTarget): Promise<StartAnswer | FinishAnswer> {
  const stub = connectionsStub(env, { kind: "user", userId });
  const started = await stub.startFlow(target, CALLBACK, userId);
  if (!("flowId" in started)) return started;
  const flow = await stub.flow(started.flowId);
  const state = new URL(String(flow?.authorizationUrl)).searchParams.get("state");
  return stub.finish(String(state), `code-${crypto.randomUUID()}`, undefined, userId);
}

/**
 * A pre-registered client's id and secret belong to the authorization server they were
 * registered at. The MCP server's protected-resource metadata names the authorization server,
 * so a hostile or compromised MCP server could point Slipsnisse at one of its own: here the
 * second loopback origin plays it, and must never receive a request carrying the secret.
 */
describe("a pre-registered client's secret goes only to its own issuer", () => {
  it("client credentials: the first issuer is pinned; when the server later names another authorization server, that one gets no secret and the error names both", async () => {
    const tag = tagOf("cc-first");
    expect(await team().accessToken(machine(tag))).toMatchObject({ token: expect.stringMatching(/^at-/) });
    // The control for the searches below: the real issuer was sent the secret, and the search finds it.
    expect(leaks((await received(fixtures.issuer, tag)).text)).not.toEqual([]);
    // The client is handed to the SDK stamped with the pinned issuer, so the SDK's own check (SEP-2352) holds too.
    const provider = new ConnectionOAuthProvider(env, await TokenCipher.fromEnv(env), { target: machine(tag), redirectUrl: CALLBACK });
    expect(await provider.clientInformation()).toEqual({ client_id: CLIENT_ID, client_secret: CLIENT_SECRET, issuer: `${fixtures.issuer}/t/${tag}` });

    await configure(fixtures.issuer, tag, { authorizationServer: "peer" });
    await team().remove(machine(tag).url);
    const refused = await team().accessToken(machine(tag));
    const hostile = await received(fixtures.otherIssuer, tag);
    expect(leaks(hostile.text)).toEqual([]);
    expect(hostile.posts).toBe(0);
    expect(refused).toEqual({ missing: expect.stringContaining(`server "crm" now names the authorization server ${fixtures.otherIssuer}/t/${tag}`) });
    expect(JSON.stringify(refused)).toContain(`registered at ${fixtures.issuer}/t/${tag} (the first issuer it was used with)`);
  });

  it("client credentials with auth.issuer: another issuer is refused from the first call; the named one works", async () => {
    const tag = tagOf("cc-configured");
    const target = machine(tag, { issuer: `${fixtures.issuer}/t/${tag}` });
    await configure(fixtures.issuer, tag, { authorizationServer: "peer" });
    const refused = await team().accessToken(target);
    expect(leaks((await received(fixtures.otherIssuer, tag)).text)).toEqual([]);
    expect((await received(fixtures.otherIssuer, tag)).posts).toBe(0);
    expect(refused).toEqual({ missing: expect.stringContaining(`registered at ${fixtures.issuer}/t/${tag} (auth.issuer)`) });

    await configure(fixtures.issuer, tag, { authorizationServer: "self" });
    expect(await team().accessToken(target)).toMatchObject({ token: expect.stringMatching(/^at-/) });
  });

  it("browser sign-in (authorization code): one member's sign-in pins the issuer; the next member, sent to another authorization server, is refused before anything is sent", async () => {
    const tag = tagOf("code-first");
    expect(await signIn("u-pin-alice", mailbox(tag))).toMatchObject({ serverId: "mail" });
    expect(leaks((await received(fixtures.issuer, tag)).text)).not.toEqual([]);

    await configure(fixtures.issuer, tag, { authorizationServer: "peer" });
    const refused = await signIn("u-pin-bob", mailbox(tag));
    const hostile = await received(fixtures.otherIssuer, tag);
    expect(leaks(hostile.text)).toEqual([]);
    expect(hostile.posts).toBe(0);
    expect(refused).toEqual({ failed: expect.stringContaining(`now names the authorization server ${fixtures.otherIssuer}/t/${tag}`) });
  });

  it("a token endpoint on another origin than the issuer is refused unless the catalog names it (auth.token_endpoint)", async () => {
    const tag = tagOf("cc-endpoint");
    await configure(fixtures.issuer, tag, { tokenEndpoint: "peer" });
    const elsewhere = `${fixtures.otherIssuer}/t/${tag}/token`;
    const refused = await team().accessToken(machine(tag));
    expect(leaks((await received(fixtures.otherIssuer, tag)).text)).toEqual([]);
    expect(refused).toEqual({ missing: expect.stringContaining(`names the token endpoint ${elsewhere}, on another origin`) });

    expect(await team().accessToken(machine(tag, { tokenEndpoint: elsewhere }))).toMatchObject({ token: expect.stringMatching(/^at-/) });
    expect(leaks((await received(fixtures.otherIssuer, tag)).text)).not.toEqual([]);
  });
});

const ECHO_SKILL = `pins-echo-${crypto.randomUUID().slice(0, 8)}`;
const ECHO_TAG = tagOf("echo");
const dora: UserProps = { userId: "u-pin-dora", login: "dora", role: "member" };

/**
 * A token endpoint that answers `invalid_client` with everything it was sent, in every form a
 * secret can take, in its error description: the secret must reach no answer, run record,
 * trace, log line or connect page.
 */
describe("a token endpoint that echoes the client secret", () => {
  const models = useCatalogWithScriptedModels({
    skills: {
      [ECHO_SKILL]: {
        servers: {
          crm: {
            url: `${fixtures.issuer}/t/${ECHO_TAG}/mcp`,
            transport: "streamable-http",
            auth: {
              type: "oauth",
              connection: "team",
              grant: "client_credentials",
              client_id_secret: "PIN_CLIENT_ID",
              client_secret_secret: "PIN_CLIENT_SECRET",
            },
          },
        },
        experts: [expertOf("ask_crm", { crm: ["whoami"] })],
      },
    },
  });
  let consoles: MockInstance[] = [];
  beforeEach(() => {
    consoles = (["log", "info", "warn", "error", "debug"] as const).map((method) => vi.spyOn(console, method));
  });
  afterEach(() => {
    for (const spy of consoles) spy.mockRestore();
  });
  const logged = () => JSON.stringify(consoles.map((spy) => spy.mock.calls));

  it("in either client authentication: neither the answer, the run record and trace, nor a log line holds any encoding of it", async () => {
    const answers: string[] = [];
    for (const authMethod of ["client_secret_basic", "client_secret_post"] as const) {
      await configure(fixtures.issuer, ECHO_TAG, { echo: true, authMethod });
      models.play([{ calls: [{ name: "crm__whoami", input: {} }] }, { text: "done" }]);
      const result = await sessionStub(env, ECHO_SKILL, dora.userId).callExpert({
        runId: crypto.randomUUID(),
        skill: ECHO_SKILL,
        expert: "ask_crm",
        args: { query: "who am I?" },
        user: dora,
      });
      answers.push(JSON.stringify(result));
    }
    // The endpoint was sent the secret and echoed it: the answer shows where it was cut out.
    expect(leaks((await received(fixtures.issuer, ECHO_TAG)).text).length).toBeGreaterThan(1);
    for (const answer of answers) {
      expect(answer).toContain("[redacted]");
      expect(leaks(answer)).toEqual([]);
    }
    const stored = await runInDurableObject(sessionStub(env, ECHO_SKILL, dora.userId), async (_instance, state) => {
      const sql = state.storage.sql;
      const tables = sql
        .exec<{ name: string }>(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite%'`)
        .toArray()
        .map((row) => row.name);
      return JSON.stringify(tables.map((name) => sql.exec(`SELECT * FROM "${name}"`).toArray()));
    });
    expect(stored).toContain("who am I?");
    expect(leaks(stored)).toEqual([]);
    expect(leaks(logged())).toEqual([]);
  });

  it("the browser sign-in's callback: the refusal shown on the connect page holds no encoding of it", async () => {
    const tag = tagOf("echo-code");
    await configure(fixtures.issuer, tag, { echo: true });
    const refused = await signIn("u-pin-erik", mailbox(tag));
    expect(refused).toEqual({ refused: expect.stringContaining("[redacted]") });
    expect(leaks(JSON.stringify(refused))).toEqual([]);
    expect(leaks(logged())).toEqual([]);
  });
});
