import { readFile } from "node:fs/promises";
import { z } from "zod";

const cpuProfileSchema = z.object({
  nodes: z.array(
    z.object({
      id: z.number(),
      callFrame: z.object({ functionName: z.string(), url: z.string(), lineNumber: z.number() }),
    }),
  ),
  samples: z.array(z.number()),
  timeDeltas: z.array(z.number()),
});

export interface HotSpot {
  frame: string;
  selfMs: number;
}

/** Self time per function of a V8 .cpuprofile (sample deltas attributed to the sampled node). */
export async function profileHotSpots(path: string, top = 8): Promise<HotSpot[]> {
  const profile = cpuProfileSchema.parse(JSON.parse(await readFile(path, "utf8")));
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const selfUs = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const frame = frames.get(id);
    const label = frame ? `${frame.functionName || "(anonymous)"} ${frame.url.split("/").pop() ?? ""}:${frame.lineNumber + 1}` : "?";
    selfUs.set(label, (selfUs.get(label) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  return [...selfUs.entries()]
    .map(([frame, us]) => ({ frame, selfMs: us / 1000 }))
    .sort((a, b) => b.selfMs - a.selfMs)
    .slice(0, top);
}
