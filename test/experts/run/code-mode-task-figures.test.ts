import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { ExpertConfig } from "../../../src/catalog/catalog-schema";
import type { ExpertRunResult, SandboxLoader } from "../../../src/experts/core/run-types";
import { runExpert } from "../../../src/experts/run/run-expert";
import { makeExpert, makePolicy } from "../../support/expert-fixture";
import { FakeToolSource, textResult } from "../../support/fake-tool-source";
import { scriptedModel, type ScriptedTurn } from "../../support/workers/scripted-model";

const loader: SandboxLoader = env.LOADER;
/** The model latency the goals are stated at; applied to the round trips counted, not slept. */
const MODEL_LATENCY_MS = 400;
const RESULT_BYTES = 50_000;

/** A record of about 50 KB whose `next` names the following hop and `fact` is what the answer needs. */
function records() {
  return new FakeToolSource({
    kb: {
      lookup: {
        inputSchema: { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
        result: (args) => {
          const id = String(args.id);
          const hop = Number(id.slice(1));
          return textResult(JSON.stringify({ id, next: `n${hop + 1}`, fact: `fact-${id}`, body: "x".repeat(RESULT_BYTES) }));
        },
      },
    },
  });
}

const expert = (mode: ExpertConfig["mode"]) =>
  makeExpert({ mode, internal_tools: { kb: ["lookup"] }, budget: { max_steps: 8, max_tool_calls: 10, max_tool_result_bytes: 65_536 } });

interface Figures {
  roundTrips: number;
  bytesToModel: number;
  wallMs: number;
}

async function measure(mode: ExpertConfig["mode"], turns: ScriptedTurn[]): Promise<Figures & { result: ExpertRunResult }> {
  const model = scriptedModel(turns);
  const started = Date.now();
  const result = await runExpert({ expert: expert(mode), toolPolicy: makePolicy(), args: { query: "follow the chain" }, model, tools: records(), loader });
  const runMs = Date.now() - started;
  const roundTrips = model.doGenerateCalls.length;
  const bytesToModel = model.doGenerateCalls.reduce((sum, call) => sum + JSON.stringify(call.prompt).length + JSON.stringify(call.tools ?? []).length, 0);
  return { result, roundTrips, bytesToModel, wallMs: runMs + roundTrips * MODEL_LATENCY_MS };
}

const lookup = (id: string) => ({ name: "kb__lookup", input: { id } });
const script = (code: string): ScriptedTurn => ({ calls: [{ name: "run_script", input: { code } }] });

function report(task: string, loop: Figures, code: Figures): void {
  const share = ((100 * code.bytesToModel) / loop.bytesToModel).toFixed(1);
  console.log(
    `[code-mode task] ${task}: tool loop ${loop.roundTrips} model calls, ${loop.bytesToModel} B to the model, ${loop.wallMs} ms; ` +
      `code mode ${code.roundTrips} model calls, ${code.bytesToModel} B (${share} %), ${code.wallMs} ms (at ${MODEL_LATENCY_MS} ms per model call)`,
  );
}

describe("code mode against the tool loop on the issue's tasks (scripted model, 50 KB results)", () => {
  it("a four-hop dependent chain: at most 10 % of the bytes to the model and half the wall time", async () => {
    const loop = await measure("synthesize", [
      { calls: [lookup("n0")] },
      { calls: [lookup("n1")] },
      { calls: [lookup("n2")] },
      { calls: [lookup("n3")] },
      { text: "fact-n3" },
    ]);
    const code = await measure("code", [
      script(`let id = "n0", last;
for (let hop = 0; hop < 4; hop++) { last = JSON.parse(await tools.kb__lookup({ id })); id = last.next; }
return last.fact;`),
      { text: "fact-n3" },
    ]);
    report("four-hop chain", loop, code);
    expect(code.result.steps[0]?.toolCalls.map((call) => call.status)).toEqual(["ok", "ok", "ok", "ok", "ok"]);
    expect([loop.roundTrips, code.roundTrips]).toEqual([5, 2]);
    expect(code.bytesToModel).toBeLessThanOrEqual(loop.bytesToModel * 0.1);
    expect(code.wallMs).toBeLessThanOrEqual(loop.wallMs / 2);
  });

  it("a fan-out of six independent lookups", async () => {
    const ids = ["n0", "n1", "n2", "n3", "n4", "n5"];
    const loop = await measure("synthesize", [{ calls: ids.map(lookup) }, { text: "six facts" }]);
    const code = await measure("code", [
      script(`const ids = ${JSON.stringify(ids)};
return (await Promise.all(ids.map((id) => tools.kb__lookup({ id })))).map((text) => JSON.parse(text).fact);`),
      { text: "six facts" },
    ]);
    report("fan-out of six", loop, code);
    expect(code.result.usage.toolCalls).toBe(6);
    expect([loop.roundTrips, code.roundTrips]).toEqual([2, 2]);
    expect(code.bytesToModel).toBeLessThanOrEqual(loop.bytesToModel * 0.1);
  });
});
