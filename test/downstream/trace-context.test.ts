import { describe, expect, it } from "vitest";
import { newSpanId, parseCallerTrace, traceIdOf, traceMeta, traceparent } from "../../src/downstream/trace-context";

describe("traceparent", () => {
  it("gives every request its own valid span id, also across refills of the random pool", () => {
    const trace = { traceId: traceIdOf(crypto.randomUUID()) };
    // 8 bytes a span id: 400 headers draw on the 1,024-byte pool more than three times over.
    const headers = Array.from({ length: 400 }, () => traceparent(trace));
    for (const header of headers) expect(header).toMatch(new RegExp(`^00-${trace.traceId}-(?!0{16})[0-9a-f]{16}-01$`));
    expect(new Set(headers.map((header) => header.split("-")[2])).size).toBe(400);
  });

  it("takes a run id as the trace id, and mints one for an id that cannot be one", () => {
    expect(traceIdOf("0F8FAD5B-D9CB-469F-A165-70867728950E")).toBe("0f8fad5bd9cb469fa16570867728950e");
    for (const unusable of ["00000000-0000-0000-0000-000000000000", "not-a-uuid"]) expect(traceIdOf(unusable)).toMatch(/^(?!0{32})[0-9a-f]{32}$/);
  });
});

describe("a caller's trace context (params._meta, SEP-414)", () => {
  const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
  const spanId = "00f067aa0ba902b7";

  it("accepts a valid traceparent and tracestate, with the sampled flag", () => {
    expect(parseCallerTrace(`00-${traceId}-${spanId}-01`, "rojo=00f067aa0ba902b7, congo=t61rcWkgMzE")).toEqual({
      traceId,
      spanId,
      sampled: true,
      traceState: "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE",
    });
    expect(parseCallerTrace(`00-${traceId}-${spanId}-00`)).toEqual({ traceId, spanId, sampled: false });
    // A later version may append fields; a version-00 reader takes the first four.
    expect(parseCallerTrace(`01-${traceId}-${spanId}-01-what-the-future-holds`)).toMatchObject({ traceId, spanId });
  });

  it("ignores malformed, oversized and all-zero values, and drops only a bad tracestate", () => {
    const hostile: unknown[] = [
      undefined,
      null,
      42,
      { traceparent: `00-${traceId}-${spanId}-01` },
      [`00-${traceId}-${spanId}-01`],
      "",
      `00-${traceId.toUpperCase()}-${spanId}-01`, // uppercase hex is invalid
      `00-${traceId}-${spanId}-1`,
      `00-${traceId.slice(1)}-${spanId}-01`,
      `00-${traceId}g-${spanId}-01`,
      `00-${"0".repeat(32)}-${spanId}-01`, // all-zero trace id
      `00-${traceId}-${"0".repeat(16)}-01`, // all-zero span id
      `ff-${traceId}-${spanId}-01`, // version ff is invalid
      `00-${traceId}-${spanId}-01-extra`, // version 00 has exactly four fields
      `00-${traceId}-${spanId}-01\n`,
      ` 00-${traceId}-${spanId}-01`,
      `01-${traceId}-${spanId}-01-${"x".repeat(600)}`, // oversized
      `00-${traceId}-${spanId}-01`.repeat(1000),
    ];
    for (const value of hostile) expect(parseCallerTrace(value), String(value).slice(0, 80)).toBeUndefined();
    for (const state of ["x".repeat(600), "UPPER=1", "a=1,b", "a=1\n", Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(","), 7]) {
      expect(parseCallerTrace(`00-${traceId}-${spanId}-01`, state)).toEqual({ traceId, spanId, sampled: true });
    }
  });

  it("names the run's own span as the parent of its requests, and passes tracestate and the sampled flag on", () => {
    const trace = { traceId, spanId, traceState: "rojo=1", sampled: false };
    expect(traceparent(trace)).toBe(`00-${traceId}-${spanId}-00`);
    expect(traceMeta(trace)).toEqual({ traceparent: `00-${traceId}-${spanId}-00`, tracestate: "rojo=1" });
    expect(newSpanId()).toMatch(/^(?!0{16})[0-9a-f]{16}$/);
  });
});
