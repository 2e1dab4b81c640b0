import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { relativeSpecifiers, repo, resolveSpecifier, sourceFiles, src } from "./source-imports";

/**
 * Which files each file imports, within `root`: static, type-only, re-exports and `import()` all
 * count, because a type import ties two modules together for a reader as much as a value does.
 */
function importGraph(root: string): Map<string, string[]> {
  const files = sourceFiles(root);
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const targets = relativeSpecifiers(readFileSync(file, "utf8"))
      .map((spec) => resolveSpecifier(file, spec))
      .filter((target): target is string => target !== undefined && known.has(target));
    graph.set(file, [...new Set(targets)].sort());
  }
  return graph;
}

/** The graph's strongly connected components with more than one file, or one that imports itself (Tarjan). */
function tangles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) ?? 0, index.get(w) ?? 0));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string | undefined;
    do {
      w = stack.pop();
      if (w === undefined) break;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return found;
}

/** The shortest way from `start` back to itself inside `within`, as the files in import order (start first). */
function shortestCircle(graph: Map<string, string[]>, start: string, within: ReadonlySet<string>): string[] {
  const cameFrom = new Map<string, string>();
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    const at = queue[i] as string;
    for (const to of graph.get(at) ?? []) {
      if (!within.has(to)) continue;
      if (to === start) {
        const path = [at];
        for (let back = cameFrom.get(at); back !== undefined; back = cameFrom.get(back)) path.unshift(back);
        return path;
      }
      if (!cameFrom.has(to) && to !== start) {
        cameFrom.set(to, at);
        queue.push(to);
      }
    }
  }
  return [start];
}

/**
 * Every circle, each as its files in import order: for each tangle, the shortest circle through
 * each of its files not yet named by an earlier one, so every file of a tangle is named once at least.
 */
function circles(graph: Map<string, string[]>): string[][] {
  return tangles(graph).flatMap((tangle) => {
    const within = new Set(tangle);
    const named = new Set<string>();
    const out: string[][] = [];
    for (const file of tangle) {
      if (named.has(file)) continue;
      const circle = shortestCircle(graph, file, within);
      for (const f of circle) named.add(f);
      out.push(circle);
    }
    return out;
  });
}

function describeCircle(root: string, circle: string[]): string {
  return [...circle, circle[0] ?? ""].map((file) => relative(root, file)).join(" -> ");
}

describe("import circles", () => {
  it("finds a circle closed by a type-only import, a re-export and a dynamic import(), and names its files in order", () => {
    const dir = mkdtempSync(join(tmpdir(), "import-circles-"));
    try {
      writeFileSync(join(dir, "a.ts"), 'import type { B } from "./b";\nexport type A = B;\n');
      writeFileSync(join(dir, "b.ts"), 'export { c as B } from "./c";\n');
      writeFileSync(join(dir, "c.ts"), 'export const c = 1;\nexport const later = () => import("./a");\n');
      writeFileSync(join(dir, "d.ts"), 'import { c } from "./c";\nimport type { E } from "./e";\nexport const d: E = c;\n');
      writeFileSync(join(dir, "e.ts"), 'export type E = import("./d").Unused;\n');
      writeFileSync(join(dir, "f.ts"), 'import { c } from "./c";\nexport const f = c;\n');
      expect(circles(importGraph(dir)).map((circle) => describeCircle(dir, circle))).toEqual(["a.ts -> b.ts -> c.ts -> a.ts", "d.ts -> e.ts -> d.ts"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("no file under src/ reaches itself through its imports", () => {
    const found = circles(importGraph(src)).map((circle) => describeCircle(repo, circle));
    expect(
      found,
      "break each circle: move what the lower module needs below both (a shared type, a constant into the module that owns it), so imports run one way",
    ).toEqual([]);
  });
});
