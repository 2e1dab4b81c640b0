import { loadCatalog } from "../../e2e/harness/catalog-admin";
import { startFakeOpenAI, type ChatRequest } from "../../e2e/harness/fake-openai-server";
import { callExpert, type BenchContext, type Figure } from "../bench-context";
import { benchModelScript } from "../bench-model-script";
import { round } from "../sample-stats";

const CHARS_PER_TOKEN = 4;
const TOOL_STEPS = 5;

/**
 * What a provider sees as the prompt, in the order it renders it: the tool definitions, then the
 * messages (system first). Providers cache the longest prefix identical to an earlier prompt's.
 */
export function promptText(request: ChatRequest): string {
  return [JSON.stringify(request.tools ?? []), ...request.messages.map((message) => JSON.stringify(message))].join("\n");
}

export function commonPrefixLength(a: string, b: string): number {
  const max = Math.min(a.length, b.length);
  let i = 0;
  while (i < max && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

const tokens = (chars: number) => Math.round(chars / CHARS_PER_TOKEN);
const percent = (share: number) => `${round(share * 100, 1)}%`;

/**
 * Prefix share: two calls of a 5-tool-step expert over tools of three servers with different questions, every model request
 * recorded by a fake model of this figure's own. Per step: the prompt's size in tokens (about 4
 * characters a token) and the share of it that is byte-identical to the previous step's prompt and
 * to the same step of the previous call.
 */
export async function measurePrefixShare(ctx: BenchContext): Promise<Figure[]> {
  const fake = await startFakeOpenAI({ script: benchModelScript, record: true });
  const defaults = ctx.catalog.skills.default;
  const stepsExpert = defaults?.experts?.find((expert) => expert.name === "many_steps");
  if (!defaults || !stepsExpert) throw new Error("the bench catalog has no default skill with many_steps");
  try {
    // Tools of three servers listed in parallel, one through a glob, so that an unstable order would show.
    const [codehost, tracker] = ctx.wide;
    if (!codehost || !tracker) throw new Error("the bench started fewer than two many-tools servers");
    const internalTools = { echo: ["echo", "sleep", "big"], [codehost.name]: ["*_issue"], [tracker.name]: tracker.toolNames.slice(0, 4) };
    const servers = { ...defaults.servers, ...ctx.catalog.skills.wide?.servers };
    await loadCatalog(ctx.dev.baseUrl, {
      ...ctx.catalog,
      skills: { ...ctx.catalog.skills, prefix: { servers, experts: [{ ...stepsExpert, base_url: fake.baseURL, internal_tools: internalTools }] } },
    });
    const client = await ctx.connect("/s/prefix/mcp");
    try {
      await callExpert(client, "many_steps", `steps=${TOOL_STEPS} Which page explains the retry policy?`);
      await callExpert(client, "many_steps", `steps=${TOOL_STEPS} Who owns the billing service?`);
    } finally {
      await client.close();
    }
    const perCall = TOOL_STEPS + 1;
    if (fake.requests.length !== 2 * perCall) throw new Error(`expected ${2 * perCall} model requests, the fake model got ${fake.requests.length}`);
    const first = fake.requests.slice(0, perCall).map(promptText);
    const second = fake.requests.slice(perCall).map(promptText);
    const steps = second.map((prompt, i) => ({
      step: i + 1,
      inputTokens: tokens(prompt.length),
      sameAsPreviousStep: i === 0 ? null : commonPrefixLength(prompt, second[i - 1] ?? "") / prompt.length,
      sameAsPreviousCall: commonPrefixLength(prompt, first[i] ?? "") / prompt.length,
    }));
    const toolLists = fake.requests.map((request) => JSON.stringify(request.tools ?? []));
    const toolCount = fake.requests[0]?.tools?.length ?? 0;
    const toolsStable = toolLists.every((list) => list === toolLists[0]);
    const systemStable = fake.requests.every((request) => JSON.stringify(request.messages[0]) === JSON.stringify(fake.requests[0]?.messages[0]));
    const stableChars = (toolLists[0]?.length ?? 0) + 1 + JSON.stringify(fake.requests[0]?.messages[0] ?? "").length;
    const later = steps.slice(1);
    const meanStepShare = later.reduce((sum, s) => sum + (s.sameAsPreviousStep ?? 0), 0) / Math.max(later.length, 1);
    const tokenRow = steps.map((s) => s.inputTokens).join(", ");
    return [
      {
        id: "Prefix tokens",
        title: `model input tokens per step, an expert call with ${TOOL_STEPS} tool steps (${perCall} model requests)`,
        value: `~${tokenRow} tokens (steps 1-${perCall}); ${steps.reduce((sum, s) => sum + s.inputTokens, 0)} per call`,
        target: "(reported)",
        pass: null,
        note: "Tokens estimated as prompt characters / 4, the prompt being the tool definitions then the messages as the fake model received them.",
        details: { steps },
      },
      {
        id: "Prefix share",
        title: `share of each step's prompt byte-identical to the previous step's prompt, and to the previous call's (${toolCount} tools of 3 servers)`,
        value:
          `${percent(meanStepShare)} of a step's prompt repeats the previous step's (mean of steps 2-${perCall}); ` +
          `${percent(steps[0]?.sameAsPreviousCall ?? 0)} of step 1 repeats the previous call's (tools + system prompt, ~${tokens(stableChars)} tokens, ` +
          `${toolsStable && systemStable ? "identical in every request" : "NOT identical in every request"})`,
        target: "tool list and system prompt identical in every request",
        pass: toolsStable && systemStable,
        note:
          "Two calls of the same 5-step expert (tools of 3 servers listed in parallel, one server's through a glob) with different questions, every " +
          "model request recorded. A provider that caches stable prefixes " +
          "bills the repeated share at its cached-input rate: within a call each step re-sends the previous step's prompt and appends to it; " +
          "across calls only the tool definitions and the system prompt repeat, up to the user's question.",
        details: { steps, toolsStable, systemStable, stableChars, perStepShares: steps.map((s) => [s.sameAsPreviousStep, s.sameAsPreviousCall]) },
      },
    ];
  } finally {
    await loadCatalog(ctx.dev.baseUrl, ctx.catalog).catch(() => undefined);
    await fake.close();
  }
}
