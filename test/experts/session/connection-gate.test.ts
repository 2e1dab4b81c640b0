import { env } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import type { UserProps } from "../../../src/auth/user-props";
import { sessionStub } from "../../../src/experts/session/session-name";
import { taggedBase } from "../../fixtures/fixture-stats-client";
import { expertOf } from "../../support/workers/session-helpers";
import { useCatalogWithScriptedModels } from "../../support/workers/scripted-model";

const fixtures = inject("fixtureServers");
const skill = "connection-gate";
const gina: UserProps = { userId: "u-gina", login: "gina", role: "member" };

/**
 * The gate before the model: an expert whose whitelisted server signs each user in (`auth`)
 * cannot run for a member without a connection. Here the server serves no OAuth metadata at all
 * (the echo fixture), so the run ends with a tool error naming the server and what is missing,
 * and the model is never called.
 */
describe("connection gate", () => {
  const models = useCatalogWithScriptedModels({
    skills: {
      [skill]: {
        servers: {
          linear: { url: `${taggedBase(fixtures.echo, "gate")}/mcp`, transport: "streamable-http", auth: { type: "oauth" } },
          plain: { url: `${taggedBase(fixtures.echo, "gate-plain")}/mcp`, transport: "streamable-http" },
        },
        experts: [expertOf("needs_linear", { linear: ["echo"] }), expertOf("plain_only", { plain: ["echo"] })],
      },
    },
  });

  it("a server without OAuth metadata is a tool error naming the server and what is missing, before any model call", async () => {
    const model = models.play([{ text: "must not be called" }]);
    const result = await sessionStub(env, skill, gina.userId).callExpert({
      runId: crypto.randomUUID(),
      skill,
      expert: "needs_linear",
      args: { query: "q" },
      user: gina,
    });
    expect(result.outcome).toBe("error");
    expect(result.text).toContain('Downstream server "linear" cannot be connected: it serves no OAuth metadata');
    expect(result.text).toContain("RFC 9728");
    expect(model.doGenerateCalls).toHaveLength(0);
  });

  it("an expert whose servers need no sign-in runs as before", async () => {
    models.play([{ calls: [{ name: "plain__echo", input: { text: "hi" } }] }, { text: "Echoed." }]);
    const result = await sessionStub(env, skill, gina.userId).callExpert({
      runId: crypto.randomUUID(),
      skill,
      expert: "plain_only",
      args: { query: "q" },
      user: gina,
    });
    expect(result).toMatchObject({ outcome: "ok", text: "Echoed." });
  });
});
