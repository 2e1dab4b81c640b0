import { existsSync, readdirSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** What the architecture tests read: src/'s files and their relative imports, resolved as the bundler does. */
export const repo = fileURLToPath(new URL("../../../", import.meta.url));
export const src = join(repo, "src");

export const SOURCE = /\.(ts|mts|mjs|js)$/;
// `import … from`, `export … from`, `import "…"` and `import("…")` (dynamic, or a type in TS or JSDoc).
const SPECIFIERS = [/\bfrom\s*["']([^"']+)["']/g, /\bimport\s*["']([^"']+)["']/g, /\bimport\s*\(\s*["']([^"']+)["']\s*\)/g];

export function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return SOURCE.test(name) ? [path] : [];
  });
}

/** Every relative specifier in a file's text, in order. */
export function relativeSpecifiers(text: string): string[] {
  const found: { at: number; spec: string }[] = [];
  for (const pattern of SPECIFIERS) {
    for (const match of text.matchAll(pattern)) {
      const spec = match[1];
      if (spec?.startsWith(".")) found.push({ at: match.index, spec });
    }
  }
  return found.sort((a, b) => a.at - b.at).map(({ spec }) => spec);
}

/** The file a relative specifier names, as bundlers resolve it (extension optional, .mjs/.mts types). */
export function resolveSpecifier(from: string, spec: string): string | undefined {
  const base = resolve(dirname(from), spec);
  const candidates = [base, `${base}.ts`, `${base}.d.ts`, join(base, "index.ts"), base.replace(/\.mjs$/, ".d.mts")];
  return candidates.find((path) => existsSync(path) && statSync(path).isFile());
}
