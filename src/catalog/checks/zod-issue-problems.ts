import type { z } from "zod";
import { SECRET_NAME_PATTERN, SERVER_ID_PATTERN, SKILL_NAME_PATTERN, TOOL_NAME_PATTERN } from "../catalog-schema";
import { jsonPath, type CatalogProblem, type PathSegment } from "../catalog-problems";
import { closestWord } from "./closest-word";
import { allowedKeys } from "./schema-navigation";

type Issue = z.core.$ZodIssue;

/** What each pattern of the schema allows, in words (a regex in an error message helps no one). */
const PATTERN_WORDS = new Map<string, string>([
  [TOOL_NAME_PATTERN.toString(), "1-64 characters of letters, digits, `_`, `.` and `-`"],
  [SERVER_ID_PATTERN.toString(), "1-32 of lowercase a-z, 0-9, `-` and single `_`, starting with a letter or digit"],
  [SKILL_NAME_PATTERN.toString(), "1-63 of lowercase a-z, 0-9 and `-`, starting with a letter or digit"],
  [SECRET_NAME_PATTERN.toString(), "UPPER_SNAKE_CASE: A-Z, 0-9 and `_`, starting with a letter (a Worker secret or binding name)"],
]);

/** Translates one zod issue; `root` is the schema (to list allowed keys), `input` the document. */
export function problemsFromIssue(issue: Issue, root: z.ZodType, input: unknown): CatalogProblem[] {
  const path = issue.path.filter((segment): segment is PathSegment => typeof segment !== "symbol");
  const at = jsonPath(path);
  switch (issue.code) {
    case "unrecognized_keys": {
      const allowed = allowedKeys(root, path);
      return issue.keys.map((key) => {
        const guess = closestWord(key, allowed);
        return {
          path: jsonPath([...path, key]),
          message: `unknown key \`${key}\``,
          fix: `${guess ? `did you mean \`${guess}\`? ` : ""}remove it or use one of: ${allowed.join(", ")}`,
        };
      });
    }
    case "invalid_type": {
      const value = valueAt(input, path);
      // zod calls a map of names a "record"; in a JSON document it is an object.
      const expected = issue.expected === "record" ? "object" : issue.expected;
      if (value === undefined) return [{ path: at, message: `\`${String(path.at(-1) ?? "$")}\` is required`, fix: `add it (${article(expected)})` }];
      return [{ path: at, message: `expected ${article(expected)}, got ${describeType(value)}`, fix: `write ${article(expected)} here` }];
    }
    case "invalid_format":
      return [formatProblem(at, issue.format, issue.pattern)];
    case "too_small":
    case "too_big":
      return [rangeProblem(at, issue, valueAt(input, path))];
    case "invalid_value": {
      const options = issue.values.map((v) => JSON.stringify(v));
      const value = valueAt(input, path);
      const names = issue.values.map(String);
      const guess = typeof value === "string" && value !== "" ? (names.find((name) => name.startsWith(value)) ?? closestWord(value, names)) : undefined;
      return [{ path: at, message: `must be one of ${options.join(", ")}`, fix: guess ? `did you mean "${guess}"?` : `use one of ${options.join(", ")}` }];
    }
    default:
      return [{ path: at, message: issue.message, fix: "correct this value; the editor JSON Schema (src/catalog/catalog.schema.json) shows what is allowed" }];
  }
}

function formatProblem(at: string, format: string, pattern: string | undefined): CatalogProblem {
  if (format === "url") {
    return { path: at, message: "is not a valid http(s) URL", fix: "write an absolute URL such as https://mcp.example.com/mcp" };
  }
  const words = pattern === undefined ? undefined : PATTERN_WORDS.get(pattern);
  return {
    path: at,
    message: words ? `must be ${words}` : `is not a valid ${format}${pattern ? ` (must match ${pattern})` : ""}`,
    fix: words ? `change it to use only ${words}` : `write a valid ${format}`,
  };
}

function rangeProblem(at: string, issue: z.core.$ZodIssueTooSmall | z.core.$ZodIssueTooBig, value: unknown): CatalogProblem {
  const small = issue.code === "too_small";
  const limit = String(small ? issue.minimum : issue.maximum);
  const bound = small ? (issue.inclusive === false ? "greater than" : "at least") : issue.inclusive === false ? "less than" : "at most";
  if (issue.origin === "string") {
    const message = small && limit === "1" ? "must not be empty" : `must be ${bound} ${limit} characters long`;
    return { path: at, message, fix: small ? "write a non-empty text" : `shorten it to ${limit} characters or fewer` };
  }
  if (issue.origin === "array") {
    return { path: at, message: `must have ${bound} ${limit} item(s)`, fix: small ? "add at least one entry" : `keep ${limit} entries or fewer` };
  }
  const got = typeof value === "number" ? ` (got ${value})` : "";
  return { path: at, message: `must be ${bound} ${limit}${got}`, fix: `use a number ${bound} ${limit}` };
}

function valueAt(input: unknown, path: readonly PathSegment[]): unknown {
  let node = input;
  for (const segment of path) {
    if (typeof node !== "object" || node === null) return undefined;
    node = Reflect.get(node, segment);
  }
  return node;
}

function describeType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return article(typeof value);
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}
