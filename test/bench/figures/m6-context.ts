import { META_USAGE_KEY } from "../bench-meta";
import { callExpert, type BenchContext, type Figure } from "../bench-context";
import { round } from "../sample-stats";

/** The usual rule of thumb for English text and JSON: about 4 bytes per token. */
const tokens = (bytes: number) => Math.round(bytes / 4);
const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

/**
 * M6: what the orchestrator's context holds. (a) The `wide` skill's tools/list (two experts)
 * against the three downstream servers' lists (72 tools) an orchestrator would load if
 * connected to them directly. (b) In the 50 KB scenario, the expert's answer against the raw
 * tool output the sub-agent read.
 */
export async function measureContext(ctx: BenchContext): Promise<Figure[]> {
  const worker = await ctx.connect("/s/wide/mcp");
  const defaultSkill = await ctx.connect("/mcp");
  try {
    const surface = jsonBytes(await worker.listTools());
    let downstream = 0;
    let downstreamTools = 0;
    for (const server of ctx.wide) {
      const direct = await ctx.connect(server.url);
      const tools = await direct.listTools();
      downstream += jsonBytes(tools);
      downstreamTools += tools.length;
      await direct.close();
    }
    const big = await callExpert(defaultSkill, "read_big", "summarise the document");
    const answerBytes = Buffer.byteLength(big.content.map((part) => part.text ?? "").join(""));
    const usage = big._meta?.[META_USAGE_KEY];
    const rawBytes = 50_000;
    return [
      {
        id: "M6 tool surface",
        title: `orchestrator-visible tool list vs ${downstreamTools} downstream tools`,
        value: `${surface} B (~${tokens(surface)} tokens) vs ${downstream} B (~${tokens(downstream)} tokens), ${round(downstream / surface, 1)}x smaller`,
        target: "<= 2,000 tokens",
        pass: tokens(surface) <= 2_000,
        details: { surfaceBytes: surface, downstreamBytes: downstream, downstreamTools, servers: ctx.wide.length },
      },
      {
        id: "M6 answer",
        title: "expert answer vs raw 50 KB tool output",
        value: `${answerBytes} B (~${tokens(answerBytes)} tokens) vs ${rawBytes} B (~${tokens(rawBytes)} tokens), ${round(rawBytes / answerBytes, 0)}x smaller`,
        target: "(reported)",
        pass: null,
        note: "The answer includes the thread trailer the surface appends for follow-ups.",
        details: { answerBytes, rawBytes, usage },
      },
    ];
  } finally {
    await Promise.allSettled([worker.close(), defaultSkill.close()]);
  }
}
