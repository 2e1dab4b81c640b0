import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { readFixtureStats } from "../fixtures/fixture-stats-client";
import { waitFor } from "../support/wait-for";
import { type EchoExpertStack, fakeModelExpert, startEchoExpertStack } from "./harness/echo-expert-stack";
import { textReply, toolCallsReply, toolResultMessages, type FakeOpenAIServer } from "./harness/fake-openai-server";
import { connectMcpClient, resultText } from "./harness/mcp-clients";
import { bearer, signInAs, type OAuthSession } from "./harness/oauth-sign-in";
import type { WranglerDev } from "./harness/wrangler-dev";
import { projectWithSecrets, type ProjectWithSecrets } from "./oauth/project-with-secrets";

const HEADER_SECRET = "hdr-secret-e2e-7f3a91c2";
const MODEL_KEY = "mdl-key-e2e-55b0de17";

/** Every file under `dir`, as text (SQLite pages, KV blobs): what `wrangler dev` persisted. */
async function persistedText(dir: string): Promise<string> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const files = entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
  const contents = await Promise.all(files.map((file) => readFile(file)));
  return contents.map((bytes) => bytes.toString("latin1")).join("\n");
}

/**
 * Real secret values through the whole path with OAuth on: a header secret resolved from
 * `${NAME}`, the expert's provider API key and the caller's inbound access token. After a run
 * whose arguments carry the bearer token and whose tool result echoes the header secret, none of
 * the three is anywhere in what the Worker persisted (sessions, D1 with the run index, KV), and
 * the run index shows the caller by the login they signed in with.
 */
describe("no secret in any stored field", () => {
  let project: ProjectWithSecrets;
  let stack: EchoExpertStack;
  let dev: WranglerDev;
  let fake: FakeOpenAIServer;
  let fxBase: string;
  let alice: OAuthSession;

  beforeAll(async () => {
    project = await projectWithSecrets({ FX_TOKEN: HEADER_SECRET, MODEL_KEY });
    stack = await startEchoExpertStack({
      tag: "run-secrets",
      wrangler: { projectDir: project.dir, vars: { ENVIRONMENT: "local", AUTH: "oauth", IDP: "dev", DEV_USER: "alice", DEV_USERS: "alice" } },
      adminHeaders: bearer({ accessToken: project.adminToken }),
      server: { headers: { Authorization: "Bearer ${FX_TOKEN}" } },
      experts: (model) => [
        fakeModelExpert(model, {
          name: "echo_expert",
          description: "Calls the fixture's whoami.",
          internal_tools: { fx: ["whoami", "echo"] },
          api_key_secret: "MODEL_KEY",
        }),
      ],
    });
    ({ dev, fake, fxBase } = stack);
    fake.reset((request) => {
      const results = toolResultMessages(request);
      if (results.length > 0) return textReply(`server said: ${results.map((r) => r.content).join(" | ")}`);
      return toolCallsReply({ name: "fx__whoami", arguments: {} });
    });
    alice = await signInAs(dev.baseUrl, "alice");
  });

  afterAll(async () => {
    await stack?.stop();
    await project?.remove();
  });

  it("persists none of the header secret, the provider key or the inbound token", async () => {
    const client = await connectMcpClient("v2-2025", `${dev.baseUrl}/mcp`, { headers: bearer(alice) });
    let runId: string;
    try {
      const result = await client.callTool("echo_expert", { query: `who am I? Authorization: Bearer ${alice.accessToken}` });
      expect(resultText(result)).toContain("server said: you sent: Bearer [redacted]");
      runId = z.object({ runId: z.string() }).parse(result._meta?.["slipsnisse.dev/trace"]).runId;
    } finally {
      await client.close();
    }
    // The secrets did travel where they must: the header secret downstream.
    expect((await readFixtureStats(fxBase)).authorizations).toContain(`Bearer ${HEADER_SECRET}`);

    const admin = async (path: string) => {
      const response = await fetch(`${dev.baseUrl}/admin/api${path}`, {
        headers: bearer({ accessToken: project.adminToken }),
        signal: AbortSignal.timeout(10_000),
      });
      expect(response.status, path).toBe(200);
      return (await response.json()) as Record<string, unknown>;
    };
    const listed = await waitFor("the run in the index", async () => {
      const page = z
        .object({ runs: z.array(z.looseObject({ id: z.string(), user: z.object({ id: z.string(), login: z.string().nullable() }) })) })
        .parse(await admin("/runs"));
      return page.runs.find((run) => run.id === runId);
    });
    expect(listed.user.login).toBe("alice");
    const trace = JSON.stringify(await admin(`/runs/${runId}`));
    expect(trace).toContain("Bearer [redacted]");

    const persisted = await persistedText(dev.persistDir);
    expect(persisted).toContain(runId);
    for (const secret of [HEADER_SECRET, MODEL_KEY, alice.accessToken, project.adminToken]) {
      expect(trace).not.toContain(secret);
      expect(persisted.includes(secret), `a secret (${secret.slice(0, 6)}…) is in persisted storage`).toBe(false);
    }
  });
});
