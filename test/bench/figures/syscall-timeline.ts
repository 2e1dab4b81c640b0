import { median, round } from "../sample-stats";

/**
 * A call's timeline from `perf trace` output (figure TL, call-timeline.ts): the Worker
 * workerd's socket and fsync syscalls named by what they were, cut into calls, and the medians of
 * their segments. Pure, so the parsing is tested on its own (test/unit/bench/).
 */

/** What a traced syscall was, by the socket or file it touched. */
export type EventKind = "request" | "model>" | "<model" | "tool>" | "<tool" | "fsync" | "answer";
export interface TracedEvent {
  kind: EventKind;
  /** ms since the trace began. */
  at: number;
}
export type Role = "model" | "tool" | "client";

/**
 * perf trace's lines (`  12.345 ( 0.010 ms): workerd/123 sendto(fd: 76, …) = 1380`) as events per
 * pid, each socket read by the roles of the block it falls in (after the bench's n-th mark, the
 * n-th roles); what comes before the first mark or after the last is left out.
 */
export function parseTrace(
  text: string,
  blocks: { benchPid: string; markerFd: string; rolesByBlock: ReadonlyArray<ReadonlyMap<string, ReadonlyMap<string, Role>>> },
): Map<string, TracedEvent[]> {
  const events = new Map<string, TracedEvent[]>();
  let marks = 0;
  for (const line of text.split("\n")) {
    const match = /^\s*([\d.]+) \(\s*[\d.]+ ms\): \S+?\/(\d+) (\w+)\(fd: (\d+)[^)]*\)\s+= (-?\d+)/.exec(line);
    if (!match) continue;
    const [, at, tid = "", syscall = "", fd = "", result] = match;
    if (tid === blocks.benchPid) {
      if (syscall === "fsync" && fd === blocks.markerFd) marks += 1;
      continue;
    }
    // perf names the thread; the Worker's thread is the process's main one (tid = pid).
    const roles = blocks.rolesByBlock[marks - 1]?.get(tid);
    if (roles === undefined) continue;
    const kind = eventKind(syscall, roles.get(fd), Number(result));
    if (kind === undefined) continue;
    const list = events.get(tid) ?? [];
    if (list.length === 0) events.set(tid, list);
    list.push({ kind, at: Number(at) });
  }
  return events;
}

function eventKind(syscall: string, role: Role | undefined, result: number): EventKind | undefined {
  if (syscall === "fsync") return "fsync";
  if (role === undefined || result <= 0) return undefined;
  if (role === "client") return syscall === "recvfrom" && result > 300 ? "request" : syscall === "writev" ? "answer" : undefined;
  if (syscall === "sendto") return role === "model" ? "model>" : "tool>";
  return syscall === "recvfrom" ? (role === "model" ? "<model" : "<tool") : undefined;
}

/** The calls in a pid's events (from one request read to the next) with `modelCalls` model requests, with or without a commit. */
export function callsOf(events: readonly TracedEvent[], modelCalls: number, commits: boolean): TracedEvent[][] {
  const calls: TracedEvent[][] = [];
  let current: TracedEvent[] | undefined;
  const close = () => {
    if (current === undefined) return;
    const models = current.filter((event) => event.kind === "model>").length;
    const fsyncs = current.some((event) => event.kind === "fsync");
    if (models === modelCalls && fsyncs === commits && current.some((event) => event.kind === "answer")) calls.push(current);
  };
  for (const event of events) {
    if (event.kind === "request") {
      close();
      current = [event];
    } else current?.push(event);
  }
  close();
  return calls;
}

export interface Segments {
  calls: number;
  /** The most common sequence of events, with each one's median time from the request. */
  pattern: string;
  total: number;
  front: number;
  modelWait: number;
  steps: number;
  end: number;
}

export function segments(calls: readonly TracedEvent[][]): Segments {
  const at = (call: readonly TracedEvent[], kind: EventKind, last = false) => {
    const start = call[0]?.at ?? 0;
    const found = last ? call.findLast((event) => event.kind === kind) : call.find((event) => event.kind === kind);
    return found === undefined ? Number.NaN : found.at - start;
  };
  const modelWait = (call: readonly TracedEvent[]) => {
    let wait = 0;
    let sent: number | undefined;
    for (const event of call) {
      if (event.kind === "model>") sent = event.at;
      else if (event.kind === "<model" && sent !== undefined) {
        wait += event.at - sent;
        sent = undefined;
      }
    }
    return wait;
  };
  const counts = new Map<string, TracedEvent[][]>();
  for (const call of calls) {
    const key = call.map((event) => event.kind).join(" ");
    const same = counts.get(key);
    if (same === undefined) counts.set(key, [call]);
    else same.push(call);
  }
  const common = [...counts.values()].sort((a, b) => b.length - a.length)[0] ?? [];
  const kinds = common[0]?.map((event) => event.kind) ?? [];
  const pattern = kinds.map((kind, i) => `${kind} ${round(median(common.map((call) => (call[i]?.at ?? 0) - (call[0]?.at ?? 0))))}`).join(", ");
  return {
    calls: calls.length,
    pattern,
    total: median(calls.map((call) => at(call, "answer", true))),
    front: median(calls.map((call) => at(call, "model>"))),
    modelWait: median(calls.map(modelWait)),
    // One model call has no tool step (its last request precedes its first answer).
    steps: median(calls.map((call) => Math.max(0, at(call, "model>", true) - at(call, "<model")))),
    end: median(calls.map((call) => at(call, "answer", true) - at(call, "<model", true))),
  };
}
