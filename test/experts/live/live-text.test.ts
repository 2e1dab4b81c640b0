import { env } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import type { LiveMessage } from "../../../src/experts/live/live-events";
import { liveFeedStub } from "../../../src/experts/live/live-run-feed";
import { taggedBase } from "../../fixtures/fixture-stats-client";
import { waitFor } from "../../support/wait-for";
import { useCatalogWithScriptedModels } from "../../support/workers/scripted-model";
import { callOf, expertOf, sessionOf } from "../../support/workers/session-helpers";

const fixtures = inject("fixtureServers");
const echo = taggedBase(fixtures.echo, "live-text");
const skill = "live-text";
/** A tool name the model invents, with terminal escapes and C0/C1 controls in it. */
const INVENTED = "echo__\x1b]8;;https://evil.example\x07x\x1b]8;;\x07\x1b[31mred\x1b[0m\x00\x9b2J\r";

describe("the live feed carries names without control characters", () => {
  const models = useCatalogWithScriptedModels({
    skills: {
      [skill]: { servers: { echo: { url: `${echo}/mcp`, transport: "streamable-http" } }, experts: [expertOf("echoer", { echo: ["echo"] }, { max_steps: 3 })] },
    },
  });

  it("a tool name the model invents reaches the admins' page as plain text", async () => {
    const response = await liveFeedStub(env).fetch("https://live-feed/socket", { headers: { upgrade: "websocket" } });
    const ws = response.webSocket;
    if (!ws) throw new Error("no WebSocket");
    const messages: string[] = [];
    ws.addEventListener("message", (event) => messages.push(String(event.data)));
    ws.accept();
    try {
      models.play([{ calls: [{ name: INVENTED, input: {} }] }, { text: "done" }]);
      const call = callOf(skill, "echoer", "q");
      await sessionOf(skill).callExpert(call);
      const ended = await waitFor("the run's end on the feed", () =>
        messages.map((text) => JSON.parse(text) as LiveMessage).find((message) => message.type === "run-ended" && message.runId === call.runId),
      );
      expect(ended).toMatchObject({ tools: [{ name: "echo__xred", status: "refused" }] });
      const all = messages.join("");
      expect(all).not.toMatch(/\\u00(?:0|1)[0-9a-f]|\\u007f/i);
      expect(Array.from(all, (char) => char.codePointAt(0) ?? 0).filter((code) => code >= 0x7f && code <= 0x9f)).toEqual([]);
    } finally {
      ws.close(1000, "done");
    }
  });
});
