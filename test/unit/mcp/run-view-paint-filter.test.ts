import { describe, expect, it } from "vitest";
import { isSvgColour, RUN_APP_HTML, SVG_COLOUR } from "../../../src/mcp/server/run-app-html";

/**
 * Issue 35: the run view's filter kept `fill` with any value, and `fill="url(http://…)"` made
 * Chromium fetch that URL from the app's frame. fill and stroke keep colours only (the whole
 * filter is attacked in Chromium: test/e2e/mcp/run-app.e2e.test.ts).
 */
describe("the run view's paint filter", () => {
  it("keeps every colour the waterfall and CSS write", () => {
    for (const colour of [
      "#8c959f",
      "#0b5cad",
      "#fff",
      "#ffffff80",
      "none",
      "currentColor",
      "transparent",
      "rebeccapurple",
      "rgb(11, 92, 173)",
      "rgba(0,0,0,.5)",
      "rgb(11 92 173 / 50%)",
      "hsl(210deg 88% 36%)",
      "hsla(210, 88%, 36%, 0.5)",
      " red ",
    ])
      expect(isSvgColour(colour), colour).toBe(true);
  });

  it("drops paint server references and anything else that is not a colour", () => {
    for (const value of [
      "url(http://127.0.0.1:9/x#p)",
      "URL(http://127.0.0.1:9/x)",
      " url(#p)",
      "url('//evil.example/x')",
      "red url(http://evil.example/x)",
      "rgb(url(http://evil.example/x))",
      "rgb(1,2,3) url(x)",
      "var(--x)",
      "image-set(url(x) 1x)",
      "#fff;fill:url(x)",
      "javascript:alert(1)",
      "",
      "a".repeat(40),
      `rgb(${"1,".repeat(60)})`,
    ])
      expect(isSvgColour(value), value).toBe(false);
  });

  it("is the very rule the page's script applies", () => {
    expect(RUN_APP_HTML).toContain(`var COLOUR = ${String(SVG_COLOUR)};`);
    expect(RUN_APP_HTML).not.toContain("__SVG_COLOUR__");
  });
});
