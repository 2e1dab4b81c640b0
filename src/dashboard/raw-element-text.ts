import { raw } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import { UnsafeRawElementTextError } from "./dashboard-errors";

/**
 * The content of a `<style>` or `<script>` element. These are raw text elements (HTML, "Raw text
 * elements"): the parser decodes no character reference inside them, so HTML-escaped CSS reaches
 * the style engine as `&quot;Segoe UI&quot;` and the whole `font` declaration is dropped. Their
 * text therefore goes in unescaped, and only text built here may: our own constants, checked
 * when the module loads for anything that would close the element early (`</style`, `</script`,
 * any case) or start the script parser's comment states (`<!--`). No request, catalog or run
 * data ever reaches a raw text element; pages pass data to the live script through `data-`
 * attributes (escaped) and the socket (drawn with textContent).
 */
declare const rawElement: unique symbol;
export type RawElementText<Element extends "style" | "script"> = HtmlEscapedString & { readonly [rawElement]: Element };

const UNSAFE = /<\/(?:style|script)|<!--/i;

export function rawElementText<Element extends "style" | "script">(element: Element, text: string): RawElementText<Element> {
  const found = UNSAFE.exec(text);
  if (found) throw new UnsafeRawElementTextError(element, found[0]);
  return raw(text) as RawElementText<Element>;
}
