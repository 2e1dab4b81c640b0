import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { guardedFetch, guardedOutboundFetch } from "../../src/downstream/guarded-fetch";
import { refuseDownstreamUrl } from "../../src/downstream/url-guard";
import type { HostResolver } from "../../src/downstream/host-resolver";
import { UnsafeDownstreamUrlError } from "../../src/downstream/downstream-errors";

const production = { ...env, ENVIRONMENT: "production" } as Env;
const publicHost: HostResolver = async () => ["104.16.0.1", "2606:4700::1"];

/** The network as a table: URL → response. Every URL not listed answers 404. */
function network(routes: Record<string, () => Response>) {
  const seen: string[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL) => {
    const url = input instanceof Request ? input.url : String(input);
    seen.push(url);
    return routes[url]?.() ?? new Response("nope", { status: 404 });
  });
  return seen;
}

const redirect =
  (to: string, status = 307) =>
  () =>
    new Response(null, { status, headers: { location: to } });

describe("guarded downstream fetch", () => {
  afterEach(() => vi.restoreAllMocks());

  it("follows a same-origin redirect after checking it", async () => {
    const seen = network({
      "https://mcp.example.com/old": redirect("/mcp"),
      "https://mcp.example.com/mcp": () => new Response("ok"),
    });
    const response = await guardedFetch("docs", production, publicHost)("https://mcp.example.com/old", { method: "POST", body: "{}" });
    expect(await response.text()).toBe("ok");
    expect(seen).toEqual(["https://mcp.example.com/old", "https://mcp.example.com/mcp"]);
  });

  it("sends the body again on every hop of a 307/308, whether it was given whole or as a stream", async () => {
    const bodies: string[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
      // The first hop of a URL with a whole body goes out as given; the others as Requests.
      const request = input instanceof Request ? input : new Request(input, init);
      bodies.push(`${request.method} ${request.url} ${await request.text()}`);
      if (request.url.endsWith("/old")) return redirect("/mid", 308)();
      if (request.url.endsWith("/mid")) return redirect("/mcp")();
      return new Response("ok");
    });
    const fetcher = guardedFetch("docs", production, publicHost);
    await fetcher("https://mcp.example.com/old", { method: "POST", body: '{"id":1}', headers: { "content-type": "application/json" } });
    const stream = new Blob(['{"id":2}']).stream();
    await fetcher("https://mcp.example.com/old", { method: "POST", body: stream, duplex: "half" } as RequestInit);
    // A Request as the input (the AI SDK providers' form): its body is a stream.
    await guardedOutboundFetch(
      refuseDownstreamUrl("docs"),
      production,
      publicHost,
    )(new Request("https://mcp.example.com/old", { method: "POST", body: '{"id":3}' }));
    expect(bodies).toEqual([1, 2, 3].flatMap((id) => ["old", "mid", "mcp"].map((path) => `POST https://mcp.example.com/${path} {"id":${id}}`)));
  });

  it("follows a 303 after a POST with a GET and no body, whether the body was given whole or as a stream", async () => {
    const seen: string[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
      const request = input instanceof Request ? input : new Request(String(input), init);
      seen.push(`${request.method} ${new URL(request.url).pathname} ${await request.text()} ${request.headers.get("x-kept") ?? ""}`);
      return new URL(request.url).pathname === "/form" ? redirect("/done", 303)() : new Response("ok");
    });
    const fetcher = guardedFetch("docs", production, publicHost);
    await fetcher("https://mcp.example.com/form", { method: "POST", body: "a=1", headers: { "x-kept": "yes" } });
    await fetcher("https://mcp.example.com/form", {
      method: "POST",
      body: new Blob(["a=2"]).stream(),
      headers: { "x-kept": "yes" },
      duplex: "half",
    } as RequestInit);
    expect(seen).toEqual(["POST /form a=1 yes", "GET /done  yes", "POST /form a=2 yes", "GET /done  yes"]);
  });

  it.each([
    ["the metadata address", "http://169.254.169.254/latest/meta-data"],
    ["another public origin", "https://elsewhere.example.net/mcp"],
    ["loopback", "http://127.0.0.1:8787/mcp"],
  ])("refuses a redirect to %s and never fetches it", async (_label, target) => {
    const seen = network({ "https://mcp.example.com/mcp": redirect(target, 302) });
    const call = guardedFetch("docs", production, publicHost)("https://mcp.example.com/mcp");
    await expect(call).rejects.toThrow(UnsafeDownstreamUrlError);
    await expect(call).rejects.toThrow(/docs/);
    expect(seen).toEqual(["https://mcp.example.com/mcp"]);
  });

  it("stops an endless same-origin redirect loop", async () => {
    network({ "https://mcp.example.com/a": redirect("/b"), "https://mcp.example.com/b": redirect("/a") });
    await expect(guardedFetch("docs", production, publicHost)("https://mcp.example.com/a")).rejects.toThrow(/more than 5 redirects/);
  });

  it.each([
    ["a private address", ["10.1.2.3"]],
    ["loopback", ["127.0.0.1"]],
    ["an IPv4-mapped IPv6 loopback", ["::ffff:127.0.0.1"]],
    ["a link-local address", ["169.254.169.254"]],
  ])("refuses a host that resolves to %s, before any request", async (_label, addresses) => {
    const seen = network({});
    const resolveTo: HostResolver = async () => addresses;
    await expect(guardedFetch("docs", production, resolveTo)("https://rebind.example.com/mcp")).rejects.toThrow(/resolves to/);
    expect(seen).toEqual([]);
  });

  it("fails closed when the host cannot be resolved, and says why", async () => {
    network({});
    const broken: HostResolver = async () => {
      throw new Error("DNS-over-HTTPS answered HTTP 503");
    };
    await expect(guardedFetch("docs", production, broken)("https://mcp.example.com/mcp")).rejects.toThrow(/could not be resolved.*503/);
  });

  it("looks a trusted host up once a minute, not on every request", async () => {
    network({ "https://mcp.example.com/mcp": () => new Response("ok") });
    const lookups = vi.fn(publicHost);
    const guarded = guardedFetch("docs", production, lookups);
    await guarded("https://mcp.example.com/mcp");
    await guarded("https://mcp.example.com/mcp");
    expect(lookups).toHaveBeenCalledTimes(1);
  });

  it("refuses a refused URL on every call, among many allowed ones, and never fetches its host", async () => {
    const seen = network({ "https://mcp.example.com/mcp": () => new Response("ok") });
    const guarded = guardedFetch("docs", production, publicHost);
    for (let call = 0; call < 3; call++) {
      await expect(guarded("http://169.254.169.254/latest/meta-data")).rejects.toBeInstanceOf(UnsafeDownstreamUrlError);
      expect(await (await guarded("https://mcp.example.com/mcp")).text()).toBe("ok");
    }
    // Many distinct allowed URLs in between: the refused one is still checked when it comes again.
    for (let port = 1; port <= 40; port++) await guarded(`https://mcp.example.com:${8000 + port}/mcp`);
    await expect(guarded("http://169.254.169.254/latest/meta-data")).rejects.toBeInstanceOf(UnsafeDownstreamUrlError);
    expect(seen.filter((url) => url.includes("169.254"))).toEqual([]);
  });
});
