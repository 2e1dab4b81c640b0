import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { Client, ClientCredentialsProvider, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { skillConfig, uniqueSkill } from "../support/catalog-test-data";
import { ORIGIN, oauthVars } from "../dashboard/dashboard-test-client";

/**
 * Issue 37, SEP-1046: a service client an admin created gets a token with OAuth client
 * credentials, reaches the skills it was created for through the whole Worker (src/index.ts),
 * nothing else, and loses access the moment it is revoked.
 */
const ADMIN_TOKEN = "service-client-test-admin-token-0123456789";
const vars = { ...oauthVars, ADMIN_TOKEN };

/** The whole Worker with OAuth on, as a fetch an MCP SDK client can use. */
async function workerFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const request = new Request(input, { redirect: "manual", ...init });
  const headers = new Headers(request.headers);
  headers.set("host", new URL(request.url).host);
  const ctx = createExecutionContext();
  const response = await worker.fetch(new Request(request, { headers }) as Parameters<typeof worker.fetch>[0], { ...env, ...vars } as Env, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

async function adminApi(method: string, path: string, body?: unknown, token = ADMIN_TOKEN): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await workerFetch(`${ORIGIN}/admin/api${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

interface Created {
  clientId: string;
  clientSecret: string;
}

async function serviceClientFor(skills: string[], name = "ci-bot"): Promise<Created> {
  const created = await adminApi("POST", "/service-clients", { name, skills });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body as unknown as Created;
}

async function skill(label: string): Promise<string> {
  const name = uniqueSkill(label);
  const saved = await adminApi("PUT", `/skills/${name}`, skillConfig(`${label} skill`));
  expect(saved.status, JSON.stringify(saved.body)).toBeLessThan(300);
  return name;
}

function tokenRequest(form: Record<string, string>, basic?: { id: string; secret: string }): Promise<Response> {
  const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded" };
  if (basic) headers.authorization = `Basic ${btoa(`${encodeURIComponent(basic.id)}:${encodeURIComponent(basic.secret)}`)}`;
  return workerFetch(`${ORIGIN}/token`, { method: "POST", headers, body: new URLSearchParams(form) });
}

async function accessToken(client: Created): Promise<string> {
  const response = await tokenRequest({ grant_type: "client_credentials" }, { id: client.clientId, secret: client.clientSecret });
  const body = (await response.json()) as { access_token?: string };
  expect(response.status, JSON.stringify(body)).toBe(200);
  return body.access_token ?? "";
}

function listTools(skillName: string, token: string): Promise<Response> {
  return workerFetch(`${ORIGIN}/s/${skillName}/mcp`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-11-25",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
  });
}

async function sdkClient(skillName: string, client: Created): Promise<Client> {
  const provider = new ClientCredentialsProvider({ clientId: client.clientId, clientSecret: client.clientSecret, expectedIssuer: ORIGIN });
  const sdk = new Client({ name: "ci-bot", version: "1.0.0" });
  await sdk.connect(new StreamableHTTPClientTransport(new URL(`${ORIGIN}/s/${skillName}/mcp`), { authProvider: provider, fetch: workerFetch }));
  return sdk;
}

describe("service clients (OAuth client credentials, SEP-1046)", () => {
  it("the MCP SDK's client credentials provider reaches the skill it was created for, from discovery on", async () => {
    const allowed = await skill("svc-allowed");
    const client = await serviceClientFor([allowed]);
    const sdk = await sdkClient(allowed, client);
    const tools = await sdk.listTools();
    expect(tools.tools.map((tool) => tool.name)).toContain("ask_docs");
    await sdk.close();
  });

  it("advertises the grant and the secret methods in the authorization server metadata", async () => {
    const response = await workerFetch(`${ORIGIN}/.well-known/oauth-authorization-server`);
    const metadata = (await response.json()) as { grant_types_supported: string[]; token_endpoint_auth_methods_supported: string[] };
    expect(metadata.grant_types_supported).toEqual(expect.arrayContaining(["authorization_code", "refresh_token", "client_credentials"]));
    expect(metadata.token_endpoint_auth_methods_supported).toEqual(expect.arrayContaining(["client_secret_basic", "client_secret_post"]));
  });

  it("lists it beside members with its skills and never shows the secret again", async () => {
    const allowed = await skill("svc-listed");
    const client = await serviceClientFor([allowed], "nightly-report");
    const listed = await adminApi("GET", "/service-clients");
    const entry = (listed.body.serviceClients as Array<Record<string, unknown>>).find((row) => row.clientId === client.clientId);
    expect(entry).toMatchObject({ name: "nightly-report", skills: [allowed], createdBy: "admin-token", revokedAt: null });
    expect(JSON.stringify(listed.body)).not.toContain(client.clientSecret);
  });

  it("takes client_secret_post too, and issues no refresh token", async () => {
    const allowed = await skill("svc-post");
    const client = await serviceClientFor([allowed]);
    const response = await tokenRequest({ grant_type: "client_credentials", client_id: client.clientId, client_secret: client.clientSecret, scope: "mcp" });
    const body = (await response.json()) as Record<string, unknown>;
    expect(response.status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({ token_type: "Bearer", scope: "mcp" });
    expect(body.refresh_token).toBeUndefined();
    expect((await listTools(allowed, String(body.access_token))).status).toBe(200);
  });

  it("refuses a wrong secret, an unknown client and a malformed request with standard OAuth errors", async () => {
    const allowed = await skill("svc-wrong");
    const client = await serviceClientFor([allowed]);
    const cases: Array<[Response, number, string]> = [
      [await tokenRequest({ grant_type: "client_credentials" }, { id: client.clientId, secret: `${client.clientSecret}x` }), 401, "invalid_client"],
      [await tokenRequest({ grant_type: "client_credentials" }, { id: "svc-nobody", secret: client.clientSecret }), 401, "invalid_client"],
      [await tokenRequest({ grant_type: "client_credentials", client_id: client.clientId }), 401, "invalid_client"],
      [await tokenRequest({ grant_type: "client_credentials", scope: "admin" }, { id: client.clientId, secret: client.clientSecret }), 400, "invalid_scope"],
      [
        await tokenRequest({ grant_type: "client_credentials", resource: "https://elsewhere.example" }, { id: client.clientId, secret: client.clientSecret }),
        400,
        "invalid_target",
      ],
      [
        await tokenRequest({ grant_type: "client_credentials", client_secret: client.clientSecret }, { id: client.clientId, secret: client.clientSecret }),
        400,
        "invalid_request",
      ],
    ];
    for (const [response, status, error] of cases) {
      const text = await response.text();
      expect(response.status, text).toBe(status);
      expect((JSON.parse(text) as { error: string }).error).toBe(error);
      expect(text).not.toContain(client.clientSecret);
    }
  });

  it("reaches no skill it was not created for, and not the admin API or the dashboard's data", async () => {
    const allowed = await skill("svc-scope");
    const other = await skill("svc-other");
    const token = await accessToken(await serviceClientFor([allowed]));
    expect((await listTools(allowed, token)).status).toBe(200);
    const refused = await listTools(other, token);
    expect(refused.status, await refused.clone().text()).toBe(403);
    const adminTry = await adminApi("GET", "/skills", undefined, token);
    expect(adminTry.status).toBe(403);
    const createTry = await adminApi("POST", "/service-clients", { name: "escalate", skills: [other] }, token);
    expect(createTry.status).toBe(403);
  });

  it("a revoked client's token is refused on its very next request, and it gets no new one", async () => {
    const allowed = await skill("svc-revoke");
    const client = await serviceClientFor([allowed]);
    const token = await accessToken(client);
    expect((await listTools(allowed, token)).status).toBe(200);
    const revoked = await adminApi("POST", `/service-clients/${client.clientId}/revoke`);
    expect(revoked).toEqual({ status: 200, body: { clientId: client.clientId, revoked: true } });
    expect((await listTools(allowed, token)).status).toBe(401);
    const again = await tokenRequest({ grant_type: "client_credentials" }, { id: client.clientId, secret: client.clientSecret });
    expect(again.status).toBe(401);
    expect((await adminApi("POST", "/service-clients/svc-nobody/revoke")).status).toBe(404);
  });

  it("refuses to create a client for a skill that does not exist, or without skills", async () => {
    expect((await adminApi("POST", "/service-clients", { name: "bot", skills: ["no-such-skill-xyz"] })).status).toBe(404);
    expect((await adminApi("POST", "/service-clients", { name: "bot", skills: [] })).status).toBe(400);
    expect((await adminApi("POST", "/service-clients", { name: "bad name!", skills: ["x"] })).status).toBe(400);
  });
});
