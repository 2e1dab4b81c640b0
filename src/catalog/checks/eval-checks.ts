import { Validator, type Schema } from "@cfworker/json-schema";
import type { PathSegment } from "../catalog-problems";
import { checkObjectSchema } from "./arguments-schema-check";
import { closestWord } from "./closest-word";
import type { FindingSink } from "./finding-sink";
import { arrayItems, isRawObject, objectEntries, stringAt, type RawObject } from "./raw-json";

/** Each assertion type and the keys it takes (besides `type`); mirrors evalAssertionSchema. */
const ASSERTION_KEYS: Record<string, readonly string[]> = {
  contains: ["value", "case_sensitive"],
  matches: ["pattern", "flags"],
  json_schema: ["schema"],
  calls_tool: ["tool"],
  not_calls_tool: ["tool"],
  max_steps: ["value"],
  max_tokens: ["value"],
  max_cost: ["value"],
  rubric: ["criteria", "threshold"],
};
const ASSERTION_TYPES = Object.keys(ASSERTION_KEYS);

/**
 * An expert's `evals`: unique names, arguments its own `arguments` schema accepts (an eval the
 * expert would refuse tests nothing), assertions of a known type whose regex and schema compile,
 * and tool globs that can match a tool the expert whitelists.
 */
export function checkEvals(expert: RawObject, expertPath: readonly PathSegment[], sink: FindingSink): void {
  const seen = new Map<string, number>();
  const whitelist = whitelistedNames(expert.internal_tools);
  const hasJudge = isRawObject(expert.eval_settings) && expert.eval_settings.judge !== undefined;
  arrayItems(expert.evals).forEach((item, index) => {
    if (!isRawObject(item)) return;
    const at = [...expertPath, "evals", index];
    const name = stringAt(item, "name");
    if (name !== undefined) {
      const first = seen.get(name);
      if (first === undefined) seen.set(name, index);
      else
        sink.add(
          [...at, "name"],
          `eval name \`${name.slice(0, 80)}\` is already used by eval [${first}] of this expert`,
          "give each eval of an expert its own name",
        );
    }
    if (isRawObject(item.arguments)) checkArguments(expert.arguments, item.arguments, [...at, "arguments"], sink);
    arrayItems(item.assert).forEach((assertion, position) => {
      if (!isRawObject(assertion)) return;
      checkAssertion(assertion, whitelist, [...at, "assert", position], sink);
      if (assertion.type === "rubric" && !hasJudge) {
        sink.add(
          [...at, "assert", position],
          "a `rubric` assertion needs a judge model, and this expert names none",
          'set the expert\'s `eval_settings.judge`, e.g. {"provider": "google", "model": "gemini-2.5-flash"}',
        );
      }
    });
  });
}

function checkArguments(schema: unknown, args: RawObject, at: PathSegment[], sink: FindingSink): void {
  if (!isRawObject(schema)) return; // the default schema: {query: string}
  let result: ReturnType<Validator["validate"]>;
  try {
    result = new Validator(structuredClone(schema) as Schema, "2020-12").validate(args);
  } catch {
    return; // a schema that does not compile is reported at `arguments`
  }
  if (result.valid) return;
  const reasons = result.errors
    .filter((error) => error.keyword !== "properties")
    .slice(0, 3)
    .map((error) => `${error.instanceLocation.replace(/^#/, "") || "/"}: ${error.error}`);
  sink.add(
    at,
    `the eval's arguments do not match the expert's \`arguments\` schema (${reasons.join("; ")}), so the expert would refuse the call`,
    "write the arguments an orchestrator would send, as the expert's `arguments` schema describes them",
  );
}

function checkAssertion(assertion: RawObject, whitelist: readonly string[], at: PathSegment[], sink: FindingSink): void {
  const type = assertion.type;
  if (typeof type !== "string" || !(type in ASSERTION_KEYS)) {
    const guess = typeof type === "string" ? closestWord(type, ASSERTION_TYPES) : undefined;
    sink.add(
      [...at, "type"],
      typeof type === "string" ? `unknown assertion type \`${type.slice(0, 80)}\`` : "an assertion needs a `type`",
      `${guess ? `did you mean \`${guess}\`? ` : ""}use one of: ${ASSERTION_TYPES.join(", ")}`,
      [at],
    );
    return;
  }
  const keys = ASSERTION_KEYS[type] ?? [];
  for (const [key] of objectEntries(assertion)) {
    if (key === "type" || keys.includes(key)) continue;
    const guess = closestWord(key, keys);
    sink.add(
      [...at, key],
      `unknown key \`${key}\` for a \`${type}\` assertion`,
      `${guess ? `did you mean \`${guess}\`? ` : ""}remove it or use: type, ${keys.join(", ")}`,
    );
  }
  if (type === "matches") checkPattern(assertion, at, sink);
  if (type === "json_schema" && isRawObject(assertion.schema)) checkObjectSchema("json_schema", assertion.schema, [...at, "schema"], sink);
  if (type === "calls_tool") checkToolGlob(assertion.tool, whitelist, [...at, "tool"], sink);
}

function checkPattern(assertion: RawObject, at: PathSegment[], sink: FindingSink): void {
  const pattern = assertion.pattern;
  if (typeof pattern !== "string") return;
  try {
    new RegExp(pattern, typeof assertion.flags === "string" && /^[imsu]*$/.test(assertion.flags) ? assertion.flags : "");
  } catch (error) {
    sink.add(
      [...at, "pattern"],
      `\`pattern\` is not a valid regular expression: ${error instanceof Error ? error.message : String(error)}`,
      "write a JavaScript regular expression without the surrounding slashes, escaping `\\` as `\\\\` in JSON",
    );
  }
}

/** A `calls_tool` glob matching none of the expert's tools can never pass. */
function checkToolGlob(tool: unknown, whitelist: readonly string[], at: PathSegment[], sink: FindingSink): void {
  if (typeof tool !== "string" || whitelist.length === 0) return;
  const glob = new RegExp(
    `^${tool
      .replace(/[.+^${}()|[\]\\]/g, "\\$&")
      .replace(/\*/g, ".*")
      .replace(/\?/g, ".")}$`,
  );
  if (whitelist.some((name) => glob.test(name) || /[*?]/.test(name))) return;
  sink.add(
    at,
    `\`${tool.slice(0, 80)}\` matches none of the tools this expert may call (${whitelist.slice(0, 8).join(", ")}), so this assertion can never pass`,
    "name a tool as `server__tool`, with `*` and `?` as wildcards, from the expert's `internal_tools`",
  );
}

function whitelistedNames(internalTools: unknown): string[] {
  return objectEntries(internalTools).flatMap(([server, tools]) =>
    arrayItems(tools).flatMap((tool) => (typeof tool === "string" ? [`${server}__${tool}`] : [])),
  );
}
