import { html } from "hono/html";
import { describe, expect, it } from "vitest";
import { breakable } from "../../../src/dashboard/breakable-name";

const rendered = async (name: string) => (await html`${breakable(name)}`).toString();

describe("breakable names", () => {
  it("breaks only after the namespace separator, never inside a name", async () => {
    expect(await rendered("files__delete_everything")).toBe("files__<wbr>delete_everything");
    expect(await rendered("delete_everything")).toBe("delete_everything");
    expect(await rendered("a-b.c/d")).toBe("a-b.c/d");
    expect(await rendered("<b>x</b>__y")).toBe("&lt;b&gt;x&lt;/b&gt;__<wbr>y");
  });
});
