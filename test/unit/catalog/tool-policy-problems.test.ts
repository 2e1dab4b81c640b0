import { describe, expect, it } from "vitest";
import { parseCatalog } from "../../../src/catalog/parse-catalog";
import { defaultSkill, problemAt, problemsOf, validCatalog } from "./catalog-fixtures";

const POLICY = "$.skills.default.tool_policy";

describe("tool_policy approval checks", () => {
  it("defaults to no approval patterns and destructive tools needing approval; accepts globs over defined servers", () => {
    const plain = parseCatalog(validCatalog());
    expect(plain.ok && plain.catalog.skills.default?.tool_policy).toMatchObject({ requires_approval: [], approve_destructive: true });
    expect(plain.ok && plain.catalog.skills.default?.experts[0]?.user_input_timeout_ms).toBe(120_000);

    const catalog = validCatalog();
    defaultSkill(catalog).tool_policy = { requires_approval: ["fs__write_*", "*__delete_*", "d?cs__*", "*drop*"], approve_destructive: false };
    const parsed = parseCatalog(catalog);
    expect(parsed.ok && parsed.catalog.skills.default?.tool_policy).toMatchObject({
      approve_destructive: false,
      requires_approval: ["fs__write_*", "*__delete_*", "d?cs__*", "*drop*"],
    });
  });

  it("refuses a pattern that names an undefined server, and one without the server__ separator, each with its path and a fix", () => {
    const catalog = validCatalog();
    defaultSkill(catalog).tool_policy = { requires_approval: ["files__write", "delete_all"] };
    const problems = problemsOf(catalog);
    const unknownServer = problemAt(problems, `${POLICY}.requires_approval[0]`);
    expect(unknownServer.message).toContain("names server `files`, which this skill does not define");
    expect(unknownServer.fix).toContain("`docs`, `fs`");
    const noSeparator = problemAt(problems, `${POLICY}.requires_approval[1]`);
    expect(noSeparator.message).toContain("matches no tool");
    expect(noSeparator.fix).toContain("`*__delete_all`");
  });

  it("refuses an empty pattern and a non-boolean opt-out", () => {
    const catalog = validCatalog();
    defaultSkill(catalog).tool_policy = { requires_approval: [""], approve_destructive: "no" };
    const paths = problemsOf(catalog).map((problem) => problem.path);
    expect(paths).toContain(`${POLICY}.requires_approval[0]`);
    expect(paths).toContain(`${POLICY}.approve_destructive`);
  });
});
