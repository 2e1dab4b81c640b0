import { jsonPath, type CatalogProblem, type PathSegment } from "../catalog-problems";

/**
 * A semantic problem plus the paths whose zod issues it already explains (a stdio server's
 * `args`/`env` would otherwise also be reported as unknown keys, which hides the real cause).
 */
export interface Finding extends CatalogProblem {
  covers: string[];
}

export class FindingSink {
  readonly findings: Finding[] = [];

  add(at: readonly PathSegment[], message: string, fix: string, alsoCovers: readonly PathSegment[][] = []): void {
    const path = jsonPath(at);
    this.findings.push({ path, message, fix, covers: [path, ...alsoCovers.map((segments) => jsonPath(segments))] });
  }
}
