import { loadCatalog } from "../harness/catalog-admin";
import { startFakeOpenAI, textReply, type ChatRequest, type FakeOpenAIServer } from "../harness/fake-openai-server";
import { inject } from "vitest";
import type { CatalogInput } from "../../../src/catalog/catalog-schema";
import { attachSharedServer } from "../harness/shared-wrangler-dev";
import { awaitHandoff } from "../harness/setup-handoff";
import { SHARED_TEAM_MARKER, type SharedTeamServerInfo } from "../harness/shared-wrangler-dev-info";
import { startWranglerDev, type WranglerDev, type WranglerDevOptions } from "../harness/wrangler-dev";
import { projectWithSecrets, type ProjectWithSecrets } from "./project-with-secrets";

export const EXPERT = "ask_notes";

export interface DevTeamServer {
  dev: WranglerDev;
  fake: FakeOpenAIServer;
  adminToken: string;
  stop(): Promise<void>;
}

/**
 * `wrangler dev` with OAuth on and, unless `vars` say otherwise, the dev identity provider
 * signing in alice (DEV_USER) or bob (DEV_USERS); `secrets` go to `.dev.vars`. One expert on the fake OpenAI-compatible model, loaded with ADMIN_TOKEN.
 * The model answers every question with a line that names it, so a test can tell calls apart.
 */
export async function startDevTeamServer(
  vars: Record<string, string> = {},
  secrets: Record<string, string> = {},
  wrangler: Pick<WranglerDevOptions, "logFile" | "readyTimeoutMs"> = {},
): Promise<DevTeamServer> {
  let project: ProjectWithSecrets | undefined;
  let fake: FakeOpenAIServer | undefined;
  let dev: WranglerDev | undefined;
  const stop = async () => {
    await dev?.stop();
    await Promise.allSettled([fake?.close(), project?.remove()]);
  };
  try {
    [project, fake] = await Promise.all([projectWithSecrets(secrets), startFakeOpenAI({ script: answerEveryQuestion })]);
    dev = await startWranglerDev({
      ...wrangler,
      projectDir: project.dir,
      vars: { ENVIRONMENT: "local", AUTH: "oauth", IDP: "dev", DEV_USER: "alice", DEV_USERS: "alice,bob", ...vars },
    });
    await loadCatalog(
      dev.baseUrl,
      {
        skills: {
          default: {
            experts: [teamExpert(fake)],
          },
        },
      },
      { Authorization: `Bearer ${project.adminToken}` },
    );
    return { dev, fake, adminToken: project.adminToken, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

function answerEveryQuestion(request: ChatRequest) {
  const user = request.messages.filter((message) => message.role === "user").at(-1);
  return textReply(`notes say: ${String(user?.content)}`);
}

type ExpertInput = NonNullable<CatalogInput["skills"][string]["experts"]>[number];

/** The team's one expert, on the given fake model. */
export function teamExpert(fake: FakeOpenAIServer): ExpertInput {
  return {
    name: EXPERT,
    description: "Answers from the team's notes.",
    provider: "openai-compatible",
    base_url: fake.baseURL,
    model: "fake-cheap",
    budget: { max_steps: 2, timeout_ms: 20_000, max_output_tokens: 256, max_tool_calls: 1, max_tool_result_bytes: 4_096 },
  };
}

/**
 * The OAuth team server the e2e global setup starts once (`startDevTeamServer()` with its
 * defaults) for every file that calls this. Its skill `default` serves the team's expert on the
 * setup's own fake model (it answers as `startDevTeamServer`'s does), for files that only call
 * it; a file that needs limits, access lists or its own model's requests saves skills under
 * names of its own with `pushSharedSkill(dev, name, config, adminHeaders)` (the admin token as a
 * bearer), on `fake`, this file's own fake model. `stop()` closes that fake only; the global
 * teardown stops the server.
 */
export async function sharedDevTeamServer(): Promise<DevTeamServer> {
  const handoff = inject("sharedDevTeamServer");
  if (handoff === undefined) {
    throw new Error(
      `No shared team server was provided: the e2e project's globalSetup (test/e2e/harness/e2e-global-setup.ts) starts it when a selected file contains "${SHARED_TEAM_MARKER}"; run this file through the e2e project.`,
    );
  }
  const info = await awaitHandoff<SharedTeamServerInfo>(handoff, "The shared team server");
  const fake = await startFakeOpenAI({ script: answerEveryQuestion });
  return { dev: attachSharedServer(info), fake, adminToken: info.adminToken, stop: () => fake.close() };
}
