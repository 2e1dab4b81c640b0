import { type McpServer, type Resource, ResourceNotFoundError, ResourceTemplate } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { UserProps } from "../../auth/user-props";
import type { StoredRun } from "../../experts/records/run-log";
import { sessionStub } from "../../experts/session/session-name";
import { runViewFragment } from "./run-app";
import { runTraceMarkdown } from "./run-trace-markdown";
import { runUri } from "../delivery/expert-tool-result";

export const RUN_URI_TEMPLATE = "slipsnisse://runs/{id}";
/** resources/list shows this many of the caller's runs, newest first: a look back, not an archive (/me/api pages further). */
export const LISTED_RUNS = 50;

const runIdSchema = z.uuid();

/**
 * Each of the caller's runs in this skill as a resource `slipsnisse://runs/<id>`. Read from the
 * caller's own ExpertSession (tenant, skill and user): no parameter names another user, so
 * another user's run id is simply not there and reads as not found, the same answer as a guess.
 */
export function registerRunResources(server: McpServer, { env, skill, user, ui = false }: { env: Env; skill: string; user: UserProps; ui?: boolean }): void {
  const session = () => sessionStub(env, skill, user.userId);
  server.registerResource(
    "run",
    new ResourceTemplate(RUN_URI_TEMPLATE, {
      list: async () => ({ resources: (await session().recentRuns(LISTED_RUNS)).map(listedRun) }),
    }),
    {
      title: "Expert run",
      description: "One of your expert runs in this skill: its trace as Markdown and as JSON.",
      mimeType: "text/markdown",
      // A run changes until it ends: 2026-07-28 clients are told not to cache it (or the list).
      cacheHint: { ttlMs: 0, cacheScope: "private" },
    },
    async (uri, variables) => {
      const id = runIdSchema.safeParse(variables.id);
      const run = id.success ? await session().run(id.data) : null;
      // The session is the user's own; the check on the row is a second lock, not the first.
      if (!run || run.userId !== user.userId || run.skill !== skill) throw new ResourceNotFoundError(uri.href);
      const steps = await session().steps(run.id);
      return {
        contents: [
          { uri: uri.href, mimeType: "text/markdown", text: runTraceMarkdown(run, steps) },
          { uri: uri.href, mimeType: "application/json", text: JSON.stringify({ run, steps }) },
          // For the run view (run-app.ts): the waterfall as the dashboard draws it, escaped.
          ...(ui ? [{ uri: uri.href, mimeType: "text/html", text: await runViewFragment(run, steps) }] : []),
        ],
      };
    },
  );
}

function listedRun(run: StoredRun): Resource {
  const when = new Date(run.endedAt ?? run.startedAt).toISOString();
  return {
    uri: runUri(run.id),
    name: `run-${run.id}`,
    title: `${run.expert}: ${run.outcome}, ${new Date(run.startedAt).toISOString()}`,
    mimeType: "text/markdown",
    annotations: { lastModified: when },
  };
}
