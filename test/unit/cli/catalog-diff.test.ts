import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseCatalog } from "../../../bin/catalog-validator.mjs";
import { diffCatalogs } from "../../../src/cli/catalog-diff.mjs";

type Json = Record<string, unknown>;
type Schema = {
  type?: string | string[];
  enum?: unknown[];
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
  propertyNames?: Schema;
  items?: Schema;
};

const schema = JSON.parse(readFileSync(new URL("../../../src/catalog/catalog.schema.json", import.meta.url), "utf8")) as Schema;

/** A step into a catalog: a named property, a key of a map (an id or name the test picks), or the first item of an array. */
type Step = { property: string } | { key: string } | { item: true };

/**
 * Every leaf of the catalog's JSON Schema below a skill, as a path of steps: a property, a map
 * key (a server id, a provider from the schema's enum, a model id) or an array item. An array of
 * scalars or an open object (`arguments`, `output_schema`) is one leaf: it is compared whole.
 */
function leaves(node: Schema, path: Step[] = []): Array<{ path: Step[]; leaf: Schema }> {
  if (node.properties) return Object.entries(node.properties).flatMap(([property, child]) => leaves(child, [...path, { property }]));
  if (typeof node.additionalProperties === "object" && (node.additionalProperties.properties || node.additionalProperties.additionalProperties)) {
    const key = String(node.propertyNames?.enum?.[0] ?? `k${path.length}`);
    return leaves(node.additionalProperties, [...path, { key }]);
  }
  if (node.items?.properties) return leaves(node.items, [...path, { item: true }]);
  return [{ path, leaf: node }];
}

/** Two different values a leaf can hold (validity across fields is not the diff's concern). */
function twoValues(leaf: Schema): [unknown, unknown] {
  if (leaf.enum && leaf.enum.length >= 2) return [leaf.enum[0], leaf.enum[1]];
  switch (leaf.type) {
    case "string":
      return ["one", "two"];
    case "integer":
    case "number":
      return [200, 1];
    case "boolean":
      return [true, false];
    case "array":
      return [["one"], ["one", "two"]];
    default:
      return [{ type: "string" }, { type: "number" }];
  }
}

/** Sets `value` at `path` in `root`, making the objects and arrays on the way; an item is the expert named "e". */
function setAt(root: Json, path: Step[], value: unknown): void {
  let node: Json | unknown[] = root;
  path.forEach((step, index) => {
    const last = index === path.length - 1;
    const name = "property" in step ? step.property : "key" in step ? step.key : "0";
    const next = path[index + 1];
    const container = (node as Record<string, unknown>)[name] ?? (next && "item" in next ? [{ name: "e" }] : {});
    (node as Record<string, unknown>)[name] = last ? value : container;
    node = container as Json;
  });
}

/** The field as diff names it within its entry: the dotted path after `servers.<id>` or `experts[<n>]`. */
function fieldName(path: Step[]): string {
  const names = path.map((step) => ("property" in step ? step.property : "key" in step ? step.key : "[]"));
  const entry = names[0] === "servers" ? 2 : names[0] === "experts" ? 2 : 0;
  return names.slice(entry).join(".");
}

const skillSchema = schema.properties?.skills?.additionalProperties as Schema;
const fields = leaves(skillSchema);

describe("slipsnisse diff covers every field of the catalog schema", () => {
  it("finds the schema's fields, skill-level ones among them", () => {
    const names = fields.map(({ path }) => fieldName(path));
    expect(names.length).toBeGreaterThan(40);
    expect(names).toEqual(
      expect.arrayContaining(["retention_days", "limits.per_user.runs_per_day", "access.users", "pricing.workers-ai.k2.input_per_million"]),
    );
  });

  // `$schema` (the only other top-level field) is the editor's hint and not stored: each skill is.
  it.each(fields.map(({ path, leaf }) => [fieldName(path), path, leaf] as const))("reports a change of %s", (name, path, leaf) => {
    const [before, after] = twoValues(leaf);
    const live: Json = { experts: [{ name: "e" }] };
    const local: Json = { experts: [{ name: "e" }] };
    setAt(live, path, before);
    setAt(local, path, after);
    const lines = diffCatalogs({ skills: { s: live } }, { skills: { s: local } });
    expect(lines[0]).toBe("~ skill s");
    if (name === "name") expect(lines).toEqual(expect.arrayContaining(["    + expert two", "    - expert one"]));
    // A map or an open object is compared inside: the line names the field and what changed in it.
    // An array of objects inside an entry (an expert's evals) is compared whole, under its own name.
    else {
      const shown = name.split(".[]")[0];
      expect(
        lines.some((line) => line.trimStart().startsWith(`~ ${shown}:`) || line.trimStart().startsWith(`~ ${shown}.`)),
        lines.join("\n"),
      ).toBe(true);
    }
  });
});

describe("slipsnisse diff, skill-level fields", () => {
  const catalog = (inputPrice: number, runsPerDay: number, users: string[], retention: number) => {
    const parsed = parseCatalog({
      skills: {
        default: {
          retention_days: retention,
          access: { users },
          limits: { per_user: { runs_per_day: runsPerDay } },
          pricing: { google: { "gemini-2.5-flash": { input_per_million: inputPrice, output_per_million: 2.5 } } },
          experts: [{ name: "ask", description: "Answers.", provider: "google", model: "gemini-2.5-flash" }],
        },
      },
    });
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
    return parsed.catalog as { skills: Record<string, Json> };
  };

  it("reports a price raised 10× and runs_per_day cut from 200 to 1, access and retention", () => {
    expect(diffCatalogs(catalog(0.3, 200, ["alice"], 30), catalog(3, 1, ["alice", "bob"], 7))).toEqual([
      "~ skill default",
      '    ~ access.users: ["alice"] → ["alice","bob"]',
      "    ~ limits.per_user.runs_per_day: 200 → 1",
      "    ~ pricing.google.gemini-2.5-flash.input_per_million: 0.3 → 3",
      "    ~ retention_days: 30 → 7",
    ]);
  });

  it("reports limits and pricing added or removed whole", () => {
    const without = catalog(0.3, 200, ["alice"], 30);
    const bare = structuredClone(without);
    const skill = bare.skills.default as Json;
    delete skill.limits;
    delete skill.pricing;
    expect(diffCatalogs(without, bare)).toEqual([
      "~ skill default",
      '    - limits: {"per_user":{"runs_per_day":200}}',
      expect.stringMatching(/^ {4}- pricing: \{"google":\{"gemini-2\.5-flash":/),
    ]);
  });

  it("says nothing for the same catalog", () => {
    expect(diffCatalogs(catalog(0.3, 200, ["alice"], 30), catalog(0.3, 200, ["alice"], 30))).toEqual([]);
  });
});
