import { describe, expect, it } from "vitest";
import { dashboardFetch, signInAs } from "./dashboard-test-client";

/** The text of every `<style>` element of a page, as the browser's CSS parser receives it. */
function styles(page: string): string[] {
  return [...page.matchAll(/<style\b[^>]*>([\s\S]*?)<\/style>/g)].map((match) => match[1] ?? "");
}

/**
 * `<style>` is a raw text element: the browser decodes no entity in it, so an HTML-escaped
 * stylesheet reaches the CSS parser as `&quot;Segoe UI&quot;`, which drops the `font`
 * declaration (the pages fell back to the default serif font). Chromium's computed font is
 * checked in test/e2e/dashboard/dashboard-browser.e2e.test.ts.
 */
describe("the dashboard's stylesheet", () => {
  it("is served unescaped, on the sign-in page and a signed-in page", async () => {
    const cookie = await signInAs("alice");
    for (const [path, init] of [
      ["/admin/login", {}],
      ["/admin", { headers: { cookie } }],
    ] as const) {
      const response = await dashboardFetch(path, init);
      expect(response.status, path).toBe(200);
      const [css, ...more] = styles(await response.text());
      expect(more, path).toEqual([]);
      expect(css, path).toContain('font:15px/1.5 -apple-system,"Segoe UI",Roboto');
      expect(css?.match(/&(?:[a-z]+|#\d+|#x[0-9a-f]+);/gi) ?? [], path).toEqual([]);
    }
  });
});
