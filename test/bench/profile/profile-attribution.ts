import { z } from "zod";

export const cpuProfileSchema = z.object({
  nodes: z.array(
    z.object({
      id: z.number(),
      callFrame: z.object({ functionName: z.string(), url: z.string(), lineNumber: z.number(), scriptId: z.string() }),
      children: z.array(z.number()).optional(),
    }),
  ),
  samples: z.array(z.number()),
  timeDeltas: z.array(z.number()),
});
export type CpuProfile = z.infer<typeof cpuProfileSchema>;

/**
 * esbuild marks each bundled module with a `// path/to/module.ts` line; the module a bundle line
 * belongs to is the last marker above it. Returns a lookup from 0-based line to module label.
 */
export function moduleMap(bundleSource: string): (line: number) => string {
  const starts: Array<{ line: number; label: string }> = [];
  bundleSource.split("\n").forEach((text, line) => {
    const match = /^\/\/ (\S+\.(?:m?[jt]s|cjs|json|md))$/.exec(text);
    if (match?.[1]) starts.push({ line, label: labelOf(match[1]) });
  });
  return (line) => {
    let lo = 0;
    let hi = starts.length - 1;
    let found = "(bundle prelude)";
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const start = starts[mid];
      if (!start) break;
      if (start.line <= line) {
        found = start.label;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  };
}

/** node_modules/<pkg>[/...] → the package; src/... → the file. */
function labelOf(path: string): string {
  const rest = path.replace(/^(\.\.\/)*/, "");
  const nm = rest.lastIndexOf("node_modules/");
  if (nm >= 0) {
    const parts = rest.slice(nm + "node_modules/".length).split("/");
    const pkg = parts[0]?.startsWith("@") ? `${parts[0]}/${parts[1]}` : (parts[0] ?? "?");
    if (pkg === "@modelcontextprotocol/server" || pkg === "@modelcontextprotocol/client" || pkg === "agents") return `${pkg}/${parts.at(-1)}`;
    return pkg;
  }
  return rest;
}

export interface Attribution {
  totalMs: number;
  selfByModule: Array<{ module: string; ms: number }>;
  selfByFunction: Array<{ frame: string; ms: number }>;
  inclusive: Array<{ frame: string; ms: number }>;
}

/** Self time per bundled module and per function, and inclusive time of frames matching `watch`. */
export function attribute(profile: CpuProfile, bundleScriptId: string, moduleOf: (line: number) => string, watch: RegExp): Attribution {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const label = (id: number): string => {
    const frame = byId.get(id)?.callFrame;
    if (!frame) return "?";
    if (frame.scriptId === bundleScriptId) return moduleOf(frame.lineNumber);
    return frame.url ? `(other script) ${frame.url.split("/").pop()}` : frame.functionName || "(native)";
  };
  const fnLabel = (id: number): string => {
    const frame = byId.get(id)?.callFrame;
    if (!frame) return "?";
    return `${frame.functionName || "(anonymous)"} [${label(id)}:${frame.lineNumber + 1}]`;
  };
  const selfModule = new Map<string, number>();
  const selfFn = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const us = profile.timeDeltas[i] ?? 0;
    total += us;
    selfModule.set(label(id), (selfModule.get(label(id)) ?? 0) + us);
    selfFn.set(fnLabel(id), (selfFn.get(fnLabel(id)) ?? 0) + us);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const name = fnLabel(at);
      if (!seen.has(name) && watch.test(name)) {
        seen.add(name);
        inclusive.set(name, (inclusive.get(name) ?? 0) + us);
      }
    }
  });
  const sorted = (map: Map<string, number>) => [...map.entries()].sort((a, b) => b[1] - a[1]);
  return {
    totalMs: total / 1000,
    selfByModule: sorted(selfModule).map(([module, us]) => ({ module, ms: us / 1000 })),
    selfByFunction: sorted(selfFn).map(([frame, us]) => ({ frame, ms: us / 1000 })),
    inclusive: sorted(inclusive).map(([frame, us]) => ({ frame, ms: us / 1000 })),
  };
}
