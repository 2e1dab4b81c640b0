import { loadCatalog } from "../../e2e/harness/catalog-admin";
import { callExpert, type BenchContext, type Figure } from "../bench-context";
import { interleavedPairs, round, sampleTimes, summarize } from "../sample-stats";

const EVALS = 20;
const SKILL = "evals";

/** What an eval of the bench's one-call expert checks (all pass with the bench's fake model). */
const evalCase = (index: number) => ({
  name: `e${index}`,
  arguments: { query: "go" },
  assert: [
    { type: "contains" as const, value: "done" },
    { type: "calls_tool" as const, tool: "echo__echo" },
    { type: "max_steps" as const, value: 3 },
  ],
});

interface EvalAnswer {
  models: Array<{ passed: number; total: number }>;
}

/**
 * Evals: the overhead an eval run adds to a plain run of the same expert (interleaved: an MCP
 * tools/call of `one_call` against `POST …/evals/run` of one eval of the same expert, which runs
 * it through the same session and then reads its record and steps back and checks assertions),
 * and the time to run 20 evals of that expert at concurrency 1, 2 (the default) and 4. On a skill
 * of its own, so the AB figure's older revisions never load a catalog with `evals`.
 */
export async function measureEvals(ctx: BenchContext): Promise<Figure[]> {
  const base = ctx.catalog.skills.default;
  const oneCall = base?.experts?.find((expert) => expert.name === "one_call");
  if (!base || !oneCall) throw new Error("the bench catalog has no default/one_call expert");
  const skill = { ...base, experts: [{ ...oneCall, evals: Array.from({ length: EVALS }, (_, index) => evalCase(index)) }] };
  await loadCatalog(ctx.dev.baseUrl, { ...ctx.catalog, skills: { ...ctx.catalog.skills, [SKILL]: skill } });
  const client = await ctx.connect(`/s/${SKILL}/mcp`);
  const runEvals = async (body: Record<string, unknown>) => {
    const response = await fetch(`${ctx.dev.baseUrl}/admin/api/skills/${SKILL}/experts/one_call/evals/run`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const answer = (await response.json()) as EvalAnswer;
    const model = answer.models[0];
    if (!response.ok || !model || model.passed !== model.total)
      throw new Error(`evals/run answered ${response.status}: ${JSON.stringify(answer).slice(0, 1000)}`);
  };
  try {
    const sizes = { ...ctx.sizes, samples: Math.max(10, Math.floor(ctx.sizes.samples / 2)) };
    const pairs = await interleavedPairs(
      () => callExpert(client, "one_call", "go"),
      () => runEvals({ evals: ["e0"], concurrency: 1 }),
      sizes,
    );
    const plain = summarize(pairs.a);
    const evaluated = summarize(pairs.b);
    const ratio = evaluated.p50 / plain.p50;
    const batches: Record<string, ReturnType<typeof summarize>> = {};
    for (const concurrency of [1, 2, 4]) {
      batches[concurrency] = summarize(await sampleTimes(() => runEvals({ concurrency }), { samples: 5, warmup: 1, maxMs: 60_000 }));
    }
    const batchText = Object.entries(batches)
      .map(([concurrency, summary]) => `${round(summary.p50)} ms at concurrency ${concurrency}`)
      .join(", ");
    return [
      {
        id: "E overhead",
        title: "an eval run against a plain run of the same expert (one downstream call)",
        value: `${round(ratio, 3)}x (${round(evaluated.p50)} vs ${round(plain.p50)} ms p50, n=${evaluated.n})`,
        target: "<= 1.05x",
        pass: ratio <= 1.05,
        note: "Both arms are one HTTP request from Node: an MCP tools/call, and POST …/evals/run of one eval (admin check, skill read from D1, the same ExpertSession.callExpert, then the run record and steps read back and the assertions checked).",
        details: { plain, evaluated },
      },
      {
        id: "E 20 evals",
        title: `${EVALS} evals of one expert against the zero-latency fake model`,
        value: batchText,
        target: "(reported)",
        pass: null,
        note: "One POST …/evals/run each (p50 of 5); every eval runs in the eval user's one ExpertSession, which interleaves runs only at I/O.",
        details: batches,
      },
    ];
  } finally {
    await client.close();
    await loadCatalog(ctx.dev.baseUrl, ctx.catalog);
  }
}
