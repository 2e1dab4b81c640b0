import { afterEach, describe, expect, it } from "vitest";
import { onSkillChanged } from "../../src/catalog/skill-change-events";
import { uniqueSkill } from "../support/catalog-test-data";
import { admin } from "./admin-test-client";

const expert = (description: string) => ({ name: "ask", description, provider: "google" });

describe("skill change announcements (what the MCP surface turns into tools/list_changed)", () => {
  const heard: string[] = [];
  const stop = onSkillChanged((skill) => heard.push(skill));
  afterEach(() => {
    heard.length = 0;
  });

  it("announces every accepted change of a skill, and nothing for a no-op or a refusal", async () => {
    const skill = uniqueSkill("announce");
    await admin("PUT", `/skills/${skill}`, { experts: [expert("1")] });
    await admin("PUT", `/skills/${skill}`, { experts: [expert("1")] });
    await admin("PUT", `/skills/${skill}`, { experts: [{ name: "bad name" }] });
    await admin("PUT", `/skills/${skill}/experts/ask`, expert("2"));
    await admin("POST", `/skills/${skill}/versions/1/restore`);
    await admin("DELETE", `/skills/${skill}`);
    expect(heard).toEqual([skill, skill, skill, skill]);
  });

  it("announces every server and expert entry write", async () => {
    const skill = uniqueSkill("entries");
    await admin("PUT", `/skills/${skill}`, {});
    heard.length = 0;
    const statuses: number[] = [];
    for (const [method, path, body] of [
      ["POST", `/skills/${skill}/servers`, { id: "docs", url: "https://docs.example.com/mcp" }],
      ["PUT", `/skills/${skill}/servers/docs`, { url: "https://docs2.example.com/mcp" }],
      ["POST", `/skills/${skill}/experts`, expert("1")],
      ["DELETE", `/skills/${skill}/experts/ask`, undefined],
      ["DELETE", `/skills/${skill}/servers/docs`, undefined],
    ] as const) {
      statuses.push((await admin(method, path, body)).status);
    }
    expect(statuses).toEqual([201, 200, 201, 200, 200]);
    expect(heard).toEqual([skill, skill, skill, skill, skill]);
  });

  it("announces only the skills a catalog replacement changed or removed", async () => {
    const [kept, changed, dropped] = [uniqueSkill("kept"), uniqueSkill("changed"), uniqueSkill("dropped")];
    await admin("PUT", "/catalog", { skills: { [kept]: { experts: [expert("k")] }, [changed]: { experts: [expert("c1")] }, [dropped]: {} } });
    heard.length = 0;
    await admin("PUT", "/catalog", { skills: { [kept]: { experts: [expert("k")] }, [changed]: { experts: [expert("c2")] } } });
    expect(heard.sort()).toEqual([changed, dropped].sort());
    stop();
  });
});
