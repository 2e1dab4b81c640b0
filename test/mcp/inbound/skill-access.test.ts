import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import type { UserProps } from "../../../src/auth/user-props";
import { useCatalogWithScriptedModels } from "../../support/workers/scripted-model";
import { callOf, expertOf, sessionOf } from "../../support/workers/session-helpers";
import { appFetchAs } from "../mcp-test-client";

const carl: UserProps = { userId: "dev-carl", login: "carl", role: "member" };
const bea: UserProps = { userId: "dev-bea", login: "bea", email: "Bea@example.com", role: "member" };
const sre: UserProps = { userId: "oidc-7", login: "sam", role: "member", groups: ["SRE"] };
const root: UserProps = { userId: "dev-root", login: "root", role: "admin" };

async function toolNames(user: UserProps, skill: string): Promise<string[]> {
  const client = new Client({ name: "access-test", version: "0.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`https://team.example.com/s/${skill}/mcp`), { fetch: (input, init) => appFetchAs(user, input, init) }),
  );
  try {
    return (await client.listTools()).tools.map((tool) => tool.name);
  } finally {
    await client.close();
  }
}

describe("skill access", () => {
  useCatalogWithScriptedModels({
    skills: {
      "open-skill": { experts: [expertOf("ask_open", {})] },
      "closed-skill": { access: { users: ["bea@example.com"], groups: ["sre"] }, experts: [expertOf("ask_closed", {})] },
    },
  });

  it("lists the skill's tools for the users and groups it names, and for admins", async () => {
    expect(await toolNames(bea, "closed-skill")).toEqual(["ask_closed"]);
    expect(await toolNames(sre, "closed-skill")).toEqual(["ask_closed"]);
    expect(await toolNames(root, "closed-skill")).toEqual(["ask_closed"]);
    expect(await toolNames(carl, "open-skill")).toEqual(["ask_open"]);
  });

  it("gives anyone else a plain 403 on the skill's endpoint, and a real client cannot connect", async () => {
    const response = await appFetchAs(carl, "https://team.example.com/s/closed-skill/mcp", {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(response.status).toBe(403);
    const body = (await response.json()) as { error: string; fix: string };
    expect(body.error).toBe('You do not have access to skill "closed-skill".');
    expect(body.fix).toContain("access");
    await expect(toolNames(carl, "closed-skill")).rejects.toThrow(/You do not have access to skill \\"closed-skill\\"/);
    expect((await appFetchAs(carl, "https://team.example.com/s/closed-skill/sse")).status).toBe(403);
  });

  it("does not take an OIDC or Access login (preferred_username, chosen by the user) for a listed name; their verified email counts", async () => {
    const lookalike: UserProps = { userId: "oidc-kc-mallory", login: "bea@example.com", email: "mallory@example.com", role: "member", idp: "oidc" };
    expect((await appFetchAs(lookalike, "https://team.example.com/s/closed-skill/sse")).status).toBe(403);
    const accessSub: UserProps = { userId: "cloudflare-access-x", login: "bea@example.com", role: "member", idp: "cloudflare-access" };
    expect((await appFetchAs(accessSub, "https://team.example.com/s/closed-skill/sse")).status).toBe(403);
    const oidcBea: UserProps = { userId: "oidc-kc-bea", login: "bea-display", email: "bea@example.com", role: "member", idp: "oidc" };
    expect(await toolNames(oidcBea, "closed-skill")).toEqual(["ask_closed"]);
  });

  it("the session refuses a run of a user the skill does not list (a stream opened before the change)", async () => {
    const result = await sessionOf("closed-skill", carl).callExpert(callOf("closed-skill", "ask_closed", "hi", {}, carl));
    expect(result).toMatchObject({ outcome: "error" });
    expect(result.text).toContain('You no longer have access to skill "closed-skill"');
  });

  it("a member's own skill list leaves out skills they may not use", async () => {
    const listed = async (user: UserProps) =>
      ((await (await appFetchAs(user, "https://team.example.com/me/api/skills")).json()) as { skills: Array<{ name: string }> }).skills.map(
        (skill) => skill.name,
      );
    expect(await listed(carl)).toEqual(["open-skill"]);
    expect(await listed(bea)).toEqual(["closed-skill", "open-skill"]);
  });
});
