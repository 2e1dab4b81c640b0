import { describe, expect, it } from "vitest";
import type { DownstreamTool } from "../../../src/downstream/downstream-types";
import { runExpert } from "../../../src/experts/run/run-expert";
import { makeExpert, makePolicy } from "../../support/expert-fixture";
import { FakeToolSource } from "../../support/fake-tool-source";
import { scriptedModel } from "../../support/workers/scripted-model";

/** A source whose servers list their tools in reverse order from their second listing on. */
class ReorderingToolSource extends FakeToolSource {
  private readonly listings = new Map<string, number>();

  override async listTools(serverId: string): Promise<readonly DownstreamTool[]> {
    const tools = await super.listTools(serverId);
    const count = (this.listings.get(serverId) ?? 0) + 1;
    this.listings.set(serverId, count);
    return count === 1 ? tools : [...tools].reverse();
  }
}

describe("runExpert tool definitions", () => {
  it("sends the model the same tool list in the same order on every call, whatever order the servers list them in", async () => {
    const source = new ReorderingToolSource({
      docs: { search: {}, read: {}, delete_all: {} },
      tracker: { update_ticket: {}, close_ticket: {}, get_ticket: {}, get_sprint: {} },
    });
    // Exact names and a glob: the glob's matches come in whatever order the server lists them.
    const expert = makeExpert({ internal_tools: { docs: ["search", "read"], tracker: ["*_ticket"] } });
    const toolsSent = async () => {
      const model = scriptedModel([{ text: "ok" }]);
      const result = await runExpert({ expert, toolPolicy: makePolicy(), args: { query: "q" }, model, tools: source });
      expect(result.outcome).toBe("ok");
      return model.doGenerateCalls[0]?.tools ?? [];
    };
    const first = await toolsSent();
    const second = await toolsSent();
    expect(first.map((tool) => tool.name)).toHaveLength(5);
    // Byte-identical definitions in one order, so a provider's prompt cache keeps the prefix.
    expect(JSON.stringify(second)).toBe(JSON.stringify(first));
  });
});
