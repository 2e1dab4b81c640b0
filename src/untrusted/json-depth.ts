/**
 * How deeply a JSON request may nest arrays and objects, counting the outermost value (a
 * JSON-RPC message is 1, its `params` 2, a tool's `arguments` 3). Deeper values are refused
 * before they are parsed: V8's JSON.stringify, zod, structured clone (Durable Object RPC) and
 * the SDKs all recurse, and 10,000 levels (20 KB) overflowed the stack (issue 18).
 */
export const MAX_JSON_DEPTH = 64;

const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Scans raw JSON text (a string, or its UTF-8 bytes: no multi-byte sequence contains an ASCII
 * byte) without recursion and without parsing, and returns the depth at which it first went
 * past `limit`, or null if it never did. Brackets inside strings do not count. The text need not
 * be valid JSON: this only bounds the nesting; the parser still judges the rest.
 */
export function jsonDepthOverLimit(text: string | Uint8Array, limit = MAX_JSON_DEPTH): number | null {
  const length = text.length;
  const at = typeof text === "string" ? (index: number) => text.charCodeAt(index) : (index: number) => text[index] ?? 0;
  let depth = 0;
  let inString = false;
  for (let index = 0; index < length; index++) {
    const code = at(index);
    if (inString) {
      if (code === BACKSLASH) index++;
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) {
      inString = true;
    } else if (code === OPEN_OBJECT || code === OPEN_ARRAY) {
      depth++;
      if (depth > limit) return depth;
    } else if ((code === CLOSE_OBJECT || code === CLOSE_ARRAY) && depth > 0) {
      depth--;
    }
  }
  return null;
}

/** The words every refusal uses, so a client sees one message whatever the entry. */
export function jsonDepthMessage(what: string, limit = MAX_JSON_DEPTH): string {
  return `${what} nests arrays and objects more than ${limit} levels deep; the limit is ${limit}. Nothing was run. Send a flatter document.`;
}
