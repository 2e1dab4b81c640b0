import { Validator, type Schema } from "@cfworker/json-schema";
import type { JsonObject } from "../core/run-types";
import outputSchemaNote from "./prompts/output-schema-note.md";

const MAX_REPORTED_ERRORS = 3;
// Models often wrap JSON in a Markdown fence despite the instruction; the fence is not part of the answer.
const FENCED = /^```(?:json)?\s*\n([\s\S]*?)\n?```$/;

export type StructuredAnswer = { ok: true; value: JsonObject; json: string } | { ok: false; problem: string };

/** The instructions' addition for an expert with an `output_schema`: the note and the schema itself. */
export function outputSchemaInstructions(schema: Record<string, unknown>): string {
  return `${outputSchemaNote.trim()}\n\n${JSON.stringify(schema, null, 2)}`;
}

/**
 * Reads the model's final text as the expert's structured answer. The text is untrusted model
 * output: it is parsed and then validated against the catalog's schema with @cfworker/json-schema
 * (the validator that runs on Workers and that the catalog check compiled the schema with).
 */
export function parseStructuredAnswer(text: string, schema: Record<string, unknown>): StructuredAnswer {
  const trimmed = text.trim();
  const body = FENCED.exec(trimmed)?.[1] ?? trimmed;
  if (body.length === 0) return { ok: false, problem: "the model wrote no final answer" };
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (error) {
    return { ok: false, problem: `the final answer is not JSON (${error instanceof Error ? error.message : String(error)})` };
  }
  // The validator annotates the schema it is given; a copy keeps the catalog's object plain.
  const result = new Validator(structuredClone(schema) as Schema, "2020-12", false).validate(value);
  if (!result.valid) {
    // Deepest first: "#/answer: type" says more than the "#: property does not match" wrapped around it.
    const deepestFirst = [...result.errors].sort((x, y) => depth(y.instanceLocation) - depth(x.instanceLocation));
    const errors = deepestFirst.slice(0, MAX_REPORTED_ERRORS).map((unit) => `${unit.instanceLocation}: ${unit.error.replace(/\.$/, "")}`);
    return { ok: false, problem: `the final answer does not match output_schema (${errors.join("; ")})` };
  }
  // A schema-valid answer is an object: the catalog only accepts object schemas.
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { ok: false, problem: "the final answer is not a JSON object" };
  return { ok: true, value: { ...value }, json: JSON.stringify(value) };
}

function depth(instanceLocation: string): number {
  return instanceLocation.split("/").length;
}
