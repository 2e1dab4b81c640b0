import { describe, expect, it } from "vitest";
import { callsOf, parseTrace, segments, type Role } from "../../bench/figures/syscall-timeline";

/** One line as `perf trace` prints it. */
const line = (at: number, tid: number, syscall: string, fd: number, result: number) =>
  `${at.toFixed(3).padStart(10)} ( 0.010 ms): workerd/${tid} ${syscall}(fd: ${fd}, buf: 0x7f00, len: 8192) = ${result}`;
const roles = (entries: Array<[number, Role]>) => new Map(entries.map(([fd, role]) => [String(fd), role]));

/** A no_tools call of the product (pid 100) from `t`: request, start commit, model, end commit, answer. */
function call(t: number, client: number, model: number): string[] {
  return [
    line(t, 100, "recvfrom", client, 512),
    line(t + 2, 100, "fsync", 30, 0),
    line(t + 2.5, 100, "writev", client, 437),
    line(t + 3, 100, "sendto", model, 1380),
    line(t + 3.75, 100, "recvfrom", model, 412),
    line(t + 4.5, 100, "fsync", 30, 0),
    line(t + 6, 100, "writev", client, 988),
  ];
}

describe("a call's timeline from perf trace", () => {
  const mark = (at: number) => line(at, 300, "fsync", 9, 0);
  const trace = [
    // Before the first mark (a warm-up): left out.
    ...call(0, 5, 6),
    mark(10),
    ...call(11, 5, 6),
    // The bench's own syscalls are only its marks.
    line(18, 300, "sendto", 5, 100),
    mark(20),
    // The client's connection closed and its fd came back for the model's: the second block's roles say so.
    ...call(21, 8, 5),
    "Summary of events: not a syscall line",
  ].join("\n");
  const rolesByBlock = [
    new Map([
      [
        "100",
        roles([
          [5, "client"],
          [6, "model"],
          [7, "tool"],
        ]),
      ],
    ]),
    new Map([
      [
        "100",
        roles([
          [8, "client"],
          [5, "model"],
        ]),
      ],
    ]),
  ];

  it("names each syscall by its socket's role in the block it falls in, from the first mark on", () => {
    const events = parseTrace(trace, { benchPid: "300", markerFd: "9", rolesByBlock }).get("100") ?? [];
    expect(events.map((event) => event.kind)).toEqual([
      ...["request", "fsync", "answer", "model>", "<model", "fsync", "answer"],
      ...["request", "fsync", "answer", "model>", "<model", "fsync", "answer"],
    ]);
    expect(events[0]?.at).toBe(11);
    expect(events[7]?.at).toBe(21);
  });

  it("cuts the calls at their requests and measures each segment's median", () => {
    const events = parseTrace(trace, { benchPid: "300", markerFd: "9", rolesByBlock }).get("100") ?? [];
    expect(callsOf(events, 1, false)).toEqual([]);
    expect(callsOf(events, 2, true)).toEqual([]);
    const calls = callsOf(events, 1, true);
    expect(calls).toHaveLength(2);
    const timeline = segments(calls);
    expect(timeline).toMatchObject({ calls: 2, total: 6, front: 3, modelWait: 0.75, steps: 0, end: 2.25 });
    expect(timeline.pattern).toBe("request 0, fsync 2, answer 2.5, model> 3, <model 3.75, fsync 4.5, answer 6");
  });
});
