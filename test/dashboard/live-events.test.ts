import { describe, expect, it } from "vitest";
import { indexRow, writeIndexRows } from "../admin/run-index-rows";
import { uniqueSkill } from "../support/catalog-test-data";
import { dashboardFetch, signInAs } from "./dashboard-test-client";

describe("live runs stream", () => {
  it("sends a run that finishes after the browser connected, as an SSE event with its id", async () => {
    const skill = uniqueSkill("live");
    const response = await dashboardFetch("/admin/live/events", {}, { AUTH: "none", ENVIRONMENT: "test" });
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const reader = response.body?.getReader();
    if (!reader) throw new Error("no stream");
    const row = indexRow({ skill, startedAt: Date.now(), elapsedMs: 5_000 });
    await writeIndexRows([row]);
    let text = "";
    // Each read is one poll of the index (at most about 2 s apart); a few are enough.
    for (let read = 0; read < 6 && !text.includes("event: run"); read += 1) {
      const chunk = await reader.read();
      if (chunk.done) break;
      text += new TextDecoder().decode(chunk.value);
    }
    await reader.cancel();
    expect(text).toContain(`id: ${row.endedAt}\nevent: run\n`);
    expect(text).toContain(`"id":"${row.runId}"`);
  });

  it("refuses a member and a signed-out browser", async () => {
    expect((await dashboardFetch("/admin/live/events")).status).toBe(302);
    const member = await dashboardFetch("/admin/live/events", { headers: { cookie: await signInAs("bob") } });
    expect(member.status).toBe(403);
  });
});
