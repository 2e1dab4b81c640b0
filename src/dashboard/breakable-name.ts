import { html } from "hono/html";
import { NAMESPACE_SEPARATOR } from "../experts/tools/tool-names";

/**
 * A name (expert, server, tool) that may wrap only after its namespace separator (`server__tool`),
 * never inside a name: `delete_everything` is one word to its reader, so it does not break at
 * `_` (it overflows into the table's scroll instead). A `<wbr>` after each separator. Put it in
 * an element of class `name`, which turns off the page's break-anywhere rule for code.
 */
export function breakable(name: string) {
  return name.split(NAMESPACE_SEPARATOR).map((part, index, parts) => html`${part}${index < parts.length - 1 ? html`${NAMESPACE_SEPARATOR}<wbr>` : ""}`);
}
