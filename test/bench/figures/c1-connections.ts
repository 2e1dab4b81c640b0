import { auth, type OAuthClientInformationMixed, type OAuthClientProvider, type OAuthTokens } from "@modelcontextprotocol/client";
import { loadCatalog } from "../../e2e/harness/catalog-admin";
import { startWranglerDev } from "../../e2e/harness/wrangler-dev";
import { startSdkOAuthDownstream } from "../../e2e/connections/sdk-oauth-downstream";
import { expert } from "../bench-catalog";
import { callExpert, createConnector, type BenchContext, type Figure } from "../bench-context";
import { interleavedPairs, round, summarize } from "../sample-stats";

const TARGET = 1.05;

/**
 * C1: one downstream call through an expert whose server signs each user in (`auth: oauth`,
 * the member's token from their UserConnections object, memoised in the session) beside the same
 * call through a server with a static `Authorization: Bearer ${SECRET}` header, both to the MCP
 * SDK's OAuth example server (which checks every token by introspection, the same for both), in
 * interleaved pairs. Its own `wrangler dev` (the static token must exist before it starts).
 */
export async function measureConnections(ctx: BenchContext): Promise<Figure[]> {
  const downstream = await startSdkOAuthDownstream();
  try {
    const staticToken = await demoToken(downstream.mcpUrl);
    const dev = await startWranglerDev({
      projectDir: ctx.projectDir,
      readyTimeoutMs: 60_000,
      vars: { CONNECTIONS_KEY: "bench-connections-key-0123456789abcdefgh", DEMO_STATIC_TOKEN: staticToken },
    });
    try {
      const server = { url: downstream.mcpUrl, transport: "streamable-http" as const };
      await loadCatalog(dev.baseUrl, {
        skills: {
          default: {
            servers: { connected: { ...server, auth: { type: "oauth" } }, fixed: { ...server, headers: { Authorization: "Bearer ${DEMO_STATIC_TOKEN}" } } },
            experts: [
              expert("greet_connected", "greet", { connected: ["greet"] }, ctx.fake.baseURL, "Greets through a connected server."),
              expert("greet_static", "greet", { fixed: ["greet"] }, ctx.fake.baseURL, "Greets through a server with a static header."),
            ],
          },
        },
      });
      const client = await createConnector(dev.baseUrl, ctx.kind)("/mcp");
      try {
        await connectLoopbackUser(dev.baseUrl, await client.callTool("greet_connected", { query: "go" }));
        const times = await interleavedPairs(
          () => callExpert(client, "greet_static", "go"),
          () => callExpert(client, "greet_connected", "go"),
          ctx.sizes,
        );
        const a = summarize(times.a);
        const b = summarize(times.b);
        const ratio = b.p50 / a.p50;
        return [
          {
            id: "C1 connected vs static",
            title: "one downstream call, connected server (member's OAuth token) / static header (p50)",
            value: `${round(ratio)}x (p50 ${round(b.p50)} vs ${round(a.p50)} ms; p99 ${round(b.p99)} vs ${round(a.p99)} ms)`,
            target: `<= ${TARGET}x p50`,
            pass: ratio <= TARGET,
            note: "A connected call asks the member's UserConnections object for the token at most every 10 s (the session memoises it), so most calls pay nothing extra; the demo server issues no refresh tokens, so a refresh's cost is not in this figure.",
            details: { static: a, connected: b, p50Ratio: ratio },
          },
        ];
      } finally {
        await client.close();
      }
    } finally {
      await dev.stop();
    }
  } finally {
    await downstream.stop();
  }
}

/** `npm start -- --no-auth` style: the loopback dev user follows its connect link without a browser (the demo server approves at once). */
async function connectLoopbackUser(baseUrl: string, paused: { _meta?: Record<string, unknown> }): Promise<void> {
  const link = (paused._meta?.["slipsnisse.dev/connect"] as { url?: string } | undefined)?.url;
  if (!link) throw new Error("the first connected call did not pause with a connect link");
  const page = await (await fetch(link)).text();
  const href = /id="connect" href="([^"]+)"/.exec(page)?.[1]?.replaceAll("&amp;", "&");
  if (!href) throw new Error(`the connect page has no link onward:\n${page.slice(0, 500)}`);
  const approved = await fetch(href, { redirect: "manual" });
  const callback = approved.headers.get("location");
  if (!callback) throw new Error(`the demo authorization server did not redirect (${approved.status})`);
  const done = await fetch(new URL(callback, baseUrl));
  if (!(await done.text()).includes("Connected")) throw new Error("the connect callback did not connect");
}

/** A token from the demo authorization server for the static-header arm (DCR, PKCE, code, token, by the SDK's auth()). */
async function demoToken(serverUrl: string): Promise<string> {
  const redirectUrl = "http://127.0.0.1:9/callback";
  let client: OAuthClientInformationMixed | undefined;
  let tokens: OAuthTokens | undefined;
  let verifier = "";
  let authorizationUrl: URL | undefined;
  const provider: OAuthClientProvider = {
    redirectUrl,
    clientMetadata: {
      client_name: "bench static token",
      redirect_uris: [redirectUrl],
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    },
    clientInformation: () => client,
    saveClientInformation: (information) => {
      client = information;
    },
    tokens: () => tokens,
    saveTokens: (saved) => {
      tokens = saved;
    },
    redirectToAuthorization: (url) => {
      authorizationUrl = url;
    },
    saveCodeVerifier: (saved) => {
      verifier = saved;
    },
    codeVerifier: () => verifier,
  };
  await auth(provider, { serverUrl });
  if (!authorizationUrl) throw new Error("the demo authorization server asked for no sign-in");
  const location = (await fetch(authorizationUrl, { redirect: "manual" })).headers.get("location");
  const code = location ? new URL(location).searchParams.get("code") : null;
  if (!code) throw new Error("the demo authorization server returned no code");
  await auth(provider, { serverUrl, authorizationCode: code });
  if (!tokens) throw new Error("the demo authorization server returned no token");
  return tokens.access_token;
}
