import { describe, expect, it } from "vitest";
import { UnsafeRawElementTextError } from "../../../src/dashboard/dashboard-errors";
import { rawElementText } from "../../../src/dashboard/raw-element-text";

describe("raw element text (<style>, <script>)", () => {
  it("keeps CSS and script as written: no entity where the parser decodes none", () => {
    expect(String(rawElementText("style", 'body{font:15px "Segoe UI",sans-serif}a>b{}'))).toBe('body{font:15px "Segoe UI",sans-serif}a>b{}');
    expect(String(rawElementText("script", 'if (a < b && c > d) x = "<b>";'))).toBe('if (a < b && c > d) x = "<b>";');
  });

  it("refuses what would end the element early or open the script parser's comment states, in any case", () => {
    for (const [element, text] of [
      ["style", "a{}</style><script>alert(1)</script>"],
      ["style", "a{}</STYLE >"],
      ["script", 'const s = "</script><img src=x onerror=alert(1)>";'],
      ["script", "x = 1; </ScRiPt\n>"],
      ["script", "<!--<script>"],
      ["style", "</script>"],
    ] as const) {
      expect(() => rawElementText(element, text), text).toThrow(UnsafeRawElementTextError);
    }
  });
});
