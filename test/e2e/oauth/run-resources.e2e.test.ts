import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectMcpClient, resultText, type McpClientKind } from "../harness/mcp-clients";
import { bearer, signInAs, type OAuthSession } from "../harness/oauth-sign-in";
import { pushSharedSkill } from "../harness/shared-wrangler-dev";
import { EXPERT, sharedDevTeamServer, type DevTeamServer, teamExpert } from "./dev-team-server";

/** This file's skill on the shared team server. */
const SKILL = "run-resources";

const META_RUN = "slipsnisse.dev/run";

/**
 * A member's runs as MCP resources through `wrangler dev` with OAuth on: two real sign-ins (dev
 * identity provider), real SDK v1 and v2 clients of both protocol eras, the fake model. The
 * owner lists and reads a run its answer linked; the other member neither lists nor reads it.
 */
describe("runs as MCP resources through wrangler dev", () => {
  let server: DevTeamServer;
  let alice: OAuthSession;
  let bob: OAuthSession;

  beforeAll(async () => {
    server = await sharedDevTeamServer();
    await pushSharedSkill(server.dev, SKILL, { experts: [teamExpert(server.fake)] }, { Authorization: `Bearer ${server.adminToken}` });
    alice = await signInAs(server.dev.baseUrl, "alice");
    bob = await signInAs(server.dev.baseUrl, "bob");
  });
  afterAll(async () => {
    await server?.stop();
  });

  for (const kind of ["v2-2025", "v2-2026", "v1-http"] as const satisfies readonly McpClientKind[]) {
    it(`the owner lists and reads the run its answer links; another member gets not found (${kind})`, async () => {
      const url = `${server.dev.baseUrl}/s/${SKILL}/mcp`;
      const owner = await connectMcpClient(kind, url, { headers: bearer(alice) });
      const other = await connectMcpClient(kind, url, { headers: bearer(bob) });
      try {
        const question = `What changed, asks ${kind}?`;
        const result = await owner.callTool(EXPERT, { query: question });
        expect(result.isError ?? false).toBe(false);
        const runId = String(result._meta?.[META_RUN]);
        const uri = `slipsnisse://runs/${runId}`;
        expect(result.content.at(-1)).toMatchObject({ type: "resource_link", uri, mimeType: "text/markdown" });

        const listed = await owner.listResources();
        expect(listed[0]).toMatchObject({ uri, mimeType: "text/markdown" });

        const [markdown, json] = await owner.readResource(uri);
        expect(markdown).toMatchObject({ uri, mimeType: "text/markdown" });
        expect(markdown?.text).toContain(`# Run ${runId}`);
        // The answer the fake model gave, as the trace recorded it.
        expect(markdown?.text).toContain(resultText(result).split("\n\n")[0] ?? "(no answer)");
        expect(json).toMatchObject({ uri, mimeType: "application/json" });
        expect(JSON.parse(json?.text ?? "null")).toMatchObject({ run: { id: runId, userId: "dev-alice", outcome: "ok" } });

        expect((await other.listResources()).map((resource) => resource.uri)).not.toContain(uri);
        const refused = await other.readResource(uri).then(
          () => "read",
          (error: unknown) => String(error),
        );
        expect(refused).toMatch(/not found/i);
        expect(refused).not.toContain("dev-alice");
      } finally {
        await Promise.all([owner.close(), other.close()]);
      }
    }, 60_000);
  }
});
