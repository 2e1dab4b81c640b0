/**
 * A tiny search index over markdown documents: each `##` section is a searchable unit,
 * scored by how often the query's terms occur in it (title hits count triple).
 */
export interface DocSection {
  path: string;
  title: string;
  text: string;
}

export interface SearchHit {
  path: string;
  title: string;
  score: number;
  snippet: string;
}

export function splitSections(docName: string, markdown: string): DocSection[] {
  const sections: DocSection[] = [];
  let title = docName;
  let lines: string[] = [];
  const flush = () => {
    const text = lines.join("\n").trim();
    if (text) sections.push({ path: `${docName}#${slug(title)}`, title, text });
  };
  for (const line of markdown.split("\n")) {
    const heading = /^#{1,3}\s+(.*)$/.exec(line);
    if (heading?.[1]) {
      flush();
      title = heading[1].trim();
      lines = [];
    } else {
      lines.push(line);
    }
  }
  flush();
  return sections;
}

export function search(sections: readonly DocSection[], query: string, limit: number): SearchHit[] {
  const terms = query
    .toLowerCase()
    .split(/[^a-z0-9_-]+/)
    .filter((term) => term.length > 1);
  if (terms.length === 0) return [];
  return sections
    .map((section) => {
      const body = section.text.toLowerCase();
      const title = section.title.toLowerCase();
      const score = terms.reduce((sum, term) => sum + count(body, term) + 3 * count(title, term), 0);
      return { path: section.path, title: section.title, score, snippet: snippet(section.text, terms) };
    })
    .filter((hit) => hit.score > 0)
    .sort((a, b) => b.score - a.score)
    .slice(0, limit);
}

function count(haystack: string, needle: string): number {
  let n = 0;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) n++;
  return n;
}

function snippet(text: string, terms: readonly string[]): string {
  const lower = text.toLowerCase();
  const at = Math.max(0, Math.min(...terms.map((term) => lower.indexOf(term)).filter((i) => i >= 0)));
  const start = Math.max(0, at - 80);
  return `${start > 0 ? "…" : ""}${text
    .slice(start, start + 240)
    .replace(/\s+/g, " ")
    .trim()}…`;
}

function slug(title: string): string {
  return title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "");
}
