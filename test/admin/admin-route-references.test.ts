/// <reference types="vite/client" />
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { findMentions, routeServes } from "../user-facing-references";

const sources = {
  ...import.meta.glob<string>("/src/**/*.{ts,mjs,md}", { query: "?raw", import: "default", eager: true }),
  ...import.meta.glob<string>("/scripts/*.mjs", { query: "?raw", import: "default", eager: true }),
  ...import.meta.glob<string>(["/README.md", "/docs/*.md"], { query: "?raw", import: "default", eager: true }),
};

describe("admin routes named in messages and docs", () => {
  const routes = createApp()
    .routes.filter((route) => !route.path.endsWith("*"))
    .map((route) => ({ method: route.method, path: route.path }));
  const { adminRoutes } = findMentions(sources);

  it("finds the routes the messages name (the scan works)", () => {
    expect(Object.keys(sources).length).toBeGreaterThan(50);
    expect(adminRoutes.length).toBeGreaterThan(10);
    expect(adminRoutes).toContainEqual(expect.objectContaining({ method: "GET", path: "/admin/api/skills/<p>/health" }));
  });

  it("every GET/POST/PUT/DELETE /admin/api/… a message names is a registered route", () => {
    const missing = adminRoutes.filter(
      ({ method, path }) => !routes.some((route) => (route.method === method || route.method === "ALL") && routeServes(route.path, path)),
    );
    expect(missing).toEqual([]);
  });
});
