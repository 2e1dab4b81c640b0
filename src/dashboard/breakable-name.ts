import { html } from "hono/html";

/**
 * A name (expert, server, tool) that may wrap only after its separators (`_`, `-`, `.`, `/`),
 * never inside a word: a `<wbr>` after each. Put it in an element of class `name`, which turns
 * off the page's break-anywhere rule for code.
 */
export function breakable(name: string) {
  return name.split(/(?<=[_\-./])/).map((part, index) => html`${index > 0 ? html`<wbr>` : ""}${part}`);
}
