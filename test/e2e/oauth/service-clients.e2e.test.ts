import { Client, ClientCredentialsProvider, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../../support/wait-for";
import { runCliProcess } from "../cli/cli-process";
import { pushSharedSkill } from "../harness/shared-wrangler-dev";
import { EXPERT, sharedDevTeamServer, type DevTeamServer, teamExpert } from "./dev-team-server";

/** This file's skills on the shared team server. */
const SKILL = "service-client";
const OTHER = "service-client-other";

/**
 * Issue 37, SEP-1046, through `wrangler dev` with OAuth on: an admin creates a service client
 * with the real CLI, automation with the MCP SDK's client credentials provider discovers the
 * authorization server from the 401, gets a token, lists tools and calls the expert; the run
 * shows the service client as its user; the CLI's revoke refuses it at once.
 */
describe("a service client through wrangler dev", () => {
  let server: DevTeamServer;
  const cli = (...args: string[]) =>
    runCliProcess(args, { cwd: process.cwd(), env: { SLIPSNISSE_URL: server.dev.baseUrl, SLIPSNISSE_ADMIN_TOKEN: server.adminToken } });

  beforeAll(async () => {
    server = await sharedDevTeamServer();
    const admin = { Authorization: `Bearer ${server.adminToken}` };
    await pushSharedSkill(server.dev, SKILL, { experts: [teamExpert(server.fake)] }, admin);
    await pushSharedSkill(server.dev, OTHER, { experts: [teamExpert(server.fake)] }, admin);
  });
  afterAll(async () => {
    await server?.stop();
  });

  async function connect(skill: string, clientId: string, clientSecret: string): Promise<Client> {
    const provider = new ClientCredentialsProvider({ clientId, clientSecret, expectedIssuer: server.dev.baseUrl });
    const client = new Client({ name: "ci-bot", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.dev.baseUrl}/s/${skill}/mcp`), { authProvider: provider }));
    return client;
  }

  it("created with the CLI, it calls its skill's expert, shows as the run's user, reaches no other skill, and is refused once revoked", async () => {
    const created = await cli("service-clients", "create", "nightly-bot", SKILL, "--json");
    expect(created.code, created.stderr).toBe(0);
    const { clientId, clientSecret } = JSON.parse(created.stdout) as { clientId: string; clientSecret: string };

    const client = await connect(SKILL, clientId, clientSecret);
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain(EXPERT);
      const result = await client.callTool({ name: EXPERT, arguments: { query: "What ran last night?" } });
      expect(result.isError ?? false).toBe(false);

      const runs = await waitFor("the service client's run in the index", async () => {
        const response = await fetch(`${server.dev.baseUrl}/admin/api/runs?skill=${SKILL}`, { headers: { Authorization: `Bearer ${server.adminToken}` } });
        const page = (await response.json()) as { runs: Array<{ user: { id: string; login: string | null } }> };
        return page.runs.length > 0 ? page.runs : undefined;
      });
      expect(runs[0]?.user).toMatchObject({ id: `service-${clientId}`, login: "nightly-bot" });

      const other = await connect(OTHER, clientId, clientSecret).then(
        (sdk) => sdk.close().then(() => "connected"),
        (error: unknown) => String(error),
      );
      expect(other).toMatch(/403|not allowed|access/i);

      const listed = await cli("service-clients");
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stdout).toContain(clientId);
      expect(listed.stdout).not.toContain(clientSecret);

      const revoked = await cli("service-clients", "revoke", clientId);
      expect(revoked.code, revoked.stderr).toBe(0);
      // The same client object with its token in hand: the very next request is refused.
      const after = await client.listTools().then(
        () => "listed",
        (error: unknown) => String(error),
      );
      expect(after).not.toBe("listed");
    } finally {
      await client.close();
    }
  }, 90_000);
});
