import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { describe, expect, it } from "vitest";
import { relativeSpecifiers, repo, resolveSpecifier, SOURCE, sourceFiles, src } from "./source-imports";

/**
 * The layers of src/, top to bottom (docs/architecture.md#layers shows the same list). A file may
 * import from its own place (a folder under src/, or a top-level file) and from places in lower
 * layers; never upward, and never sideways into another place of its own layer.
 */
const LAYERS: readonly (readonly string[])[] = [
  ["index.ts", "cli"],
  ["app.ts"],
  ["dashboard"],
  ["admin", "mcp"],
  ["experts"],
  ["downstream"],
  ["catalog", "auth"],
  ["errors.ts", "env.ts", "base64url.ts", "storage-keys.ts", "execution-context.ts", "observability", "demo", "untrusted"],
];

/**
 * The wings of a place, top to bottom, with the semantics of LAYERS one level down: a file in a
 * wing (a subfolder of the place) imports from its own wing or a lower one, never upward and
 * never sideways. A file directly in the place is placed by its name. docs/architecture.md lists
 * the same under "Wings of <place>".
 */
const WINGS: Readonly<Record<string, readonly (readonly string[])[]>> = {
  experts: [["session"], ["telemetry"], ["protocol", "evals", "limits", "live", "trace"], ["records", "run"], ["tools", "sandbox"], ["models"], ["core"]],
  mcp: [["http", "legacy-sse"], ["tasks"], ["server"], ["delivery"], ["inbound"], ["mcp-errors.ts"]],
};

/**
 * Imports that leave src/ on purpose: the demo serves the README and the docs, the CLI loads its generated
 * validator (built by `npm ci`'s prepare step; before that, the import resolves to its committed
 * declaration file).
 */
const OUTSIDE_SRC: Readonly<Record<string, readonly string[]>> = {
  demo: [
    "README.md",
    "docs/architecture.md",
    "docs/catalog.md",
    "docs/clients.md",
    "docs/deploying.md",
    "docs/operating.md",
    "docs/security.md",
    "docs/testing.md",
  ],
  cli: ["bin/catalog-validator.mjs", "bin/catalog-validator.d.mts"],
};

/** The place a path under src/ belongs to: its top folder, or itself for a top-level file. */
function placeOf(path: string): string {
  const [first = ""] = relative(src, path).split(sep);
  return first;
}

function layerOf(place: string): number {
  return LAYERS.findIndex((layer) => layer.includes(place));
}

/** The wing of a path under src/<place>/: its subfolder, or itself for a file directly in the place. */
function wingOf(place: string, path: string): string {
  const [first = ""] = relative(join(src, place), path).split(sep);
  return first;
}

function wingLayerOf(place: string, wing: string): number {
  return (WINGS[place] ?? []).findIndex((layer) => layer.includes(wing));
}

interface Violation {
  file: string;
  spec: string;
  why: string;
}

function violations(): Violation[] {
  const found: Violation[] = [];
  for (const file of sourceFiles(src)) {
    const fromPlace = placeOf(file);
    const fromLayer = layerOf(fromPlace);
    const rel = relative(repo, file);
    if (fromLayer === -1) {
      found.push({ file: rel, spec: "", why: `${fromPlace} is in no layer: add it to LAYERS here and in docs/architecture.md` });
      continue;
    }
    for (const spec of relativeSpecifiers(readFileSync(file, "utf8"))) {
      const target = resolveSpecifier(file, spec);
      if (target === undefined) {
        found.push({ file: rel, spec, why: "does not resolve to a file" });
        continue;
      }
      if (relative(src, target).startsWith("..")) {
        const outside = relative(repo, target);
        if (!(OUTSIDE_SRC[fromPlace] ?? []).includes(outside)) found.push({ file: rel, spec, why: `leaves src/ for ${outside}` });
        continue;
      }
      const toPlace = placeOf(target);
      if (toPlace === fromPlace) continue;
      const toLayer = layerOf(toPlace);
      if (toLayer === -1) found.push({ file: rel, spec, why: `${toPlace} is in no layer` });
      else if (toLayer < fromLayer) found.push({ file: rel, spec, why: `${fromPlace} imports upward from ${toPlace}` });
      else if (toLayer === fromLayer) found.push({ file: rel, spec, why: `${fromPlace} imports sideways from ${toPlace} (same layer)` });
    }
  }
  return found;
}

/** Imports inside a place with wings that climb a wing or go sideways between wings of one layer. */
function wingViolations(place: string): Violation[] {
  const found: Violation[] = [];
  for (const file of sourceFiles(join(src, place))) {
    const fromWing = wingOf(place, file);
    const fromLayer = wingLayerOf(place, fromWing);
    const rel = relative(repo, file);
    if (fromLayer === -1) {
      found.push({ file: rel, spec: "", why: `${place}/${fromWing} is in no wing: add it to WINGS.${place} here and in docs/architecture.md` });
      continue;
    }
    for (const spec of relativeSpecifiers(readFileSync(file, "utf8"))) {
      const target = resolveSpecifier(file, spec);
      if (target === undefined || relative(join(src, place), target).startsWith("..")) continue;
      const toWing = wingOf(place, target);
      if (toWing === fromWing) continue;
      const toLayer = wingLayerOf(place, toWing);
      if (toLayer === -1) found.push({ file: rel, spec, why: `${place}/${toWing} is in no wing` });
      else if (toLayer < fromLayer) found.push({ file: rel, spec, why: `${place}/${fromWing} imports upward from ${place}/${toWing}` });
      else if (toLayer === fromLayer) found.push({ file: rel, spec, why: `${place}/${fromWing} imports sideways from ${place}/${toWing} (same wing layer)` });
    }
  }
  return found;
}

/** A "Wings of `<place>`" block of docs/architecture.md, as lists of wings. */
function documentedWings(doc: string, place: string): string[][] {
  const heading = new RegExp(`^Wings of \`${place}\`[\\s\\S]*?^\`\`\`\n([\\s\\S]*?)^\`\`\`$`, "m");
  const block = heading.exec(doc)?.[1] ?? "";
  return block
    .trim()
    .split("\n")
    .map((line) => line.split(", "));
}

describe("import direction (layers import downward only)", () => {
  it("finds the imports it checks: static, type-only, re-exports, dynamic and import() types", () => {
    const text = [
      'import { a } from "./a";',
      'import type {\n  B,\n} from "../b";',
      'export { c } from "./c.mjs";',
      'import "./side-effect";',
      'const d = await import("./d");',
      'let e: import("../e").E;',
      '/** @type {import("./f.mjs").F} */',
      'import { z } from "zod";',
    ].join("\n");
    expect(relativeSpecifiers(text)).toEqual(["./a", "../b", "./c.mjs", "./side-effect", "./d", "../e", "./f.mjs"]);
  });

  it("every file under src/ imports only from its own place or a lower layer", () => {
    const found = violations().map(({ file, spec, why }) => `${file}: "${spec}" — ${why}`);
    expect(found, "move the module down to the layer of its callers' dependencies, or pass the dependency in").toEqual([]);
  });

  it("docs/architecture.md#layers lists the same layers", () => {
    const doc = readFileSync(join(repo, "docs", "architecture.md"), "utf8");
    const block = /^## Layers\n[\s\S]*?^```\n([\s\S]*?)^```$/m.exec(doc)?.[1] ?? "";
    expect(
      block
        .trim()
        .split("\n")
        .map((line) => line.split(", ")),
    ).toEqual(LAYERS);
  });

  it("inside a place with wings, every file imports only from its own wing or a lower one", () => {
    for (const place of Object.keys(WINGS)) {
      const found = wingViolations(place).map(({ file, spec, why }) => `${file}: "${spec}" — ${why}`);
      expect(found, "move the module down to the wing of its callers' dependencies, or pass the dependency in").toEqual([]);
    }
  });

  it("places every subfolder and file of a place with wings in exactly one wing, as docs/architecture.md lists them", () => {
    const doc = readFileSync(join(repo, "docs", "architecture.md"), "utf8");
    for (const [place, wings] of Object.entries(WINGS)) {
      const entries = readdirSync(join(src, place)).filter((name) => statSync(join(src, place, name)).isDirectory() || SOURCE.test(name));
      const listed = wings.flat();
      expect(entries.filter((entry) => !listed.includes(entry))).toEqual([]);
      expect(listed.filter((entry) => !entries.includes(entry))).toEqual([]);
      expect(new Set(listed).size).toBe(listed.length);
      expect(documentedWings(doc, place)).toEqual(wings);
    }
  });

  it("places every folder and top-level file of src/ in exactly one layer", () => {
    const places = readdirSync(src).filter((name) => statSync(join(src, name)).isDirectory() || SOURCE.test(name));
    const listed = LAYERS.flat();
    expect(places.filter((place) => !listed.includes(place))).toEqual([]);
    expect(listed.filter((place) => !places.includes(place))).toEqual([]);
    expect(new Set(listed).size).toBe(listed.length);
  });
});
