import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const repo = fileURLToPath(new URL("../../../", import.meta.url));
const self = fileURLToPath(import.meta.url);

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === "node_modules" || name.startsWith(".") ? [] : files(path);
    return /\.(ts|mts|mjs|md|toml|sql|json)$/.test(name) ? [path] : [];
  });
}

const scanned = [
  ...["src", "test", "scripts", "bin", "docs", "migrations"].flatMap((dir) => files(join(repo, dir))),
  join(repo, "README.md"),
  join(repo, "wrangler.toml"),
];

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
function anchorsOf(markdown: string): Set<string> {
  const headings = [...markdown.matchAll(/^#{1,6} (.+)$/gm)].map((m) => m[1] ?? "");
  return new Set(
    headings.map((heading) =>
      heading
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, "")
        .replace(/ /g, "-"),
    ),
  );
}

/** `docs/<name>.md#anchor` anywhere, and relative `](<name>.md#anchor)` links inside docs/. */
function docReferences(path: string, text: string): { target: string; anchor: string | undefined }[] {
  const inDocs = relative(repo, path).startsWith("docs");
  const refs = [...text.matchAll(/\bdocs\/([a-z0-9-]+\.md)(?:#([a-z0-9-]+))?/g)].map((m) => ({ target: m[1] ?? "", anchor: m[2] }));
  if (inDocs) refs.push(...[...text.matchAll(/\]\(([a-z0-9-]+\.md)(?:#([a-z0-9-]+))?\)/g)].map((m) => ({ target: m[1] ?? "", anchor: m[2] })));
  refs.push(...[...text.matchAll(/\]\(#([a-z0-9-]+)\)/g)].map((m) => ({ target: basename(path), anchor: m[1] })).filter(() => inDocs));
  return refs;
}

describe("the repository's docs are self-contained", () => {
  it("every docs/ reference names a file and a heading that exist", () => {
    const broken: string[] = [];
    let checked = 0;
    for (const path of scanned) {
      for (const { target, anchor } of docReferences(path, readFileSync(path, "utf8"))) {
        checked++;
        const doc = join(repo, "docs", target);
        if (!existsSync(doc)) broken.push(`${relative(repo, path)}: docs/${target} does not exist`);
        else if (anchor !== undefined && !anchorsOf(readFileSync(doc, "utf8")).has(anchor))
          broken.push(`${relative(repo, path)}: docs/${target} has no heading #${anchor}`);
      }
    }
    expect(checked).toBeGreaterThan(10);
    expect(broken).toEqual([]);
  });

  it("nothing points at design notes outside the repository", () => {
    const outside = /\bDESIGN( rule|:|\.md)|\bSTACK\.md|\bupstream-sign-in\.md|\bconsent-page\.md/;
    const hits = scanned.filter((path) => path !== self && outside.test(readFileSync(path, "utf8"))).map((path) => relative(repo, path));
    expect(hits).toEqual([]);
  });
});

/** The pages a reader opens: every relative Markdown link in them leads somewhere. */
const pages = [join(repo, "README.md"), join(repo, "test", "bench", "README.md"), ...readdirSync(join(repo, "docs")).map((name) => join(repo, "docs", name))];

describe("links in the README, docs/ and the bench notes", () => {
  it("every relative link names a file that exists, and a heading that exists when it names one", () => {
    const broken: string[] = [];
    let checked = 0;
    for (const page of pages) {
      const text = readFileSync(page, "utf8").replace(/```[\s\S]*?```/g, "");
      for (const [, target = ""] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target)) continue;
        checked++;
        const [file = "", anchor] = target.split("#");
        const path = file === "" ? page : join(page, "..", file);
        if (!existsSync(path)) broken.push(`${relative(repo, page)}: ${target} does not exist`);
        else if (anchor !== undefined && !anchorsOf(readFileSync(path, "utf8")).has(anchor))
          broken.push(`${relative(repo, page)}: ${target} has no such heading`);
      }
    }
    expect(checked).toBeGreaterThan(30);
    expect(broken).toEqual([]);
  });
});
