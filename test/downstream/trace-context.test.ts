import { describe, expect, it } from "vitest";
import { traceIdOf, traceparent } from "../../src/downstream/trace-context";

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
