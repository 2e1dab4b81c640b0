import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { UserProps } from "../../../src/auth/user-props";
import { useCatalogWithScriptedModels } from "../../support/workers/scripted-model";
import { sessionOf } from "../../support/workers/session-helpers";
import { askDocsCatalog } from "../expert-test-setup";
import { appFetchAs } from "../mcp-test-client";

const dee: UserProps = { userId: "dev-resume-dee", login: "dee", role: "member" };
const eve: UserProps = { userId: "dev-resume-eve", login: "eve", role: "member" };
const URL_2025 = "https://team.example.com/mcp";

/** A GET with Last-Event-ID, as an SDK client resumes a 2025-11-25 call's stream. */
function resume(user: UserProps, lastEventId: string): Promise<Response> {
  return appFetchAs(user, URL_2025, { headers: { accept: "text/event-stream", "mcp-protocol-version": "2025-11-25", "last-event-id": lastEventId } });
}

/**
 * Issue 40.1 through the MCP endpoint: the session holds no events of a stream whose run a
 * restart cut (staged as the durable record the call left, with no run in memory), so a resume
 * is answered from the record: the interrupted run's tool error for the original request id. The
 * record is in the caller's own session: another user's resume of the same id finds nothing.
 */
describe("a resume of a call stream whose run a restart cut", () => {
  useCatalogWithScriptedModels(askDocsCatalog("default"));

  it("answers the interrupted run's tool error for the original request id; another user's resume of it is 404", async () => {
    const streamId = crypto.randomUUID();
    const runId = crypto.randomUUID();
    await runInDurableObject(sessionOf("default", dee), (_instance, state) => {
      state.storage.sql.exec(
        `INSERT INTO call_streams (id, run_id, request_id, progress_token, structured_expected, opened_at, deadline_at) VALUES (?, ?, '"call-9"', NULL, 0, ?, ?)`,
        streamId,
        runId,
        Date.now(),
        Date.now() + 60_000,
      );
    });

    const stranger = await resume(eve, `${streamId}:0`);
    expect(stranger.status).toBe(404);
    expect(await stranger.text()).toContain("No stream to resume");

    const own = await resume(dee, `${streamId}:0`);
    expect(own.status).toBe(200);
    const body = await own.text();
    const data = body.split("\n").find((line) => line.startsWith("data: {"));
    expect(body).toContain(`id: ${streamId}:1`);
    const message = JSON.parse(data?.slice(6) ?? "{}") as { id?: unknown; result?: { isError?: boolean; content?: Array<{ text?: string }> } };
    expect(message.id).toBe("call-9");
    expect(message.result?.isError).toBe(true);
    expect(message.result?.content?.[0]?.text).toMatch(new RegExp(`^Run ${runId} was interrupted: the server restarted during the run.*call the tool again`));
  });
});
