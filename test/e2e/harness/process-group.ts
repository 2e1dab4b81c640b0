import { execFileSync } from "node:child_process";

export interface GroupMember {
  pid: number;
  state: string;
  command: string;
}

/** Live members of a process group (zombies excluded: they are already dead, only unreaped). */
export function listProcessGroup(pgid: number): GroupMember[] {
  const out = execFileSync("ps", ["-eo", "pid=,pgid=,stat=,comm="], { encoding: "utf8" });
  const members: GroupMember[] = [];
  for (const line of out.split("\n")) {
    const [pid, group, state, ...command] = line.trim().split(/\s+/);
    if (pid === undefined || group === undefined || state === undefined) continue;
    if (Number(group) !== pgid || state.startsWith("Z")) continue;
    members.push({ pid: Number(pid), state, command: command.join(" ") });
  }
  return members;
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch (error) {
    // ESRCH: the group is already empty.
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
  }
}

async function waitForEmptyGroup(pgid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (listProcessGroup(pgid).length === 0) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return listProcessGroup(pgid).length === 0;
}

/**
 * Ends every process of a group this harness started (spawned detached, so the group id is the
 * child's pid): SIGTERM, then SIGKILL after `graceMs`. Throws if anything survives.
 */
export async function killProcessGroup(pgid: number, graceMs = 5_000): Promise<void> {
  signalGroup(pgid, "SIGTERM");
  if (await waitForEmptyGroup(pgid, graceMs)) return;
  signalGroup(pgid, "SIGKILL");
  if (await waitForEmptyGroup(pgid, 3_000)) return;
  const left = listProcessGroup(pgid).map((m) => `${m.pid} ${m.command}`);
  throw new Error(`process group ${pgid} survived SIGKILL: ${left.join(", ")}`);
}

/** Whether a pid is a running (not zombie) process. */
export function isLiveProcess(pid: number): boolean {
  const out = execFileSync("ps", ["-eo", "pid=,stat="], { encoding: "utf8" });
  return out.split("\n").some((line) => {
    const [p, state] = line.trim().split(/\s+/);
    return Number(p) === pid && state !== undefined && !state.startsWith("Z");
  });
}

/** The pids of `parent`'s live children whose command line contains `text`. */
export function childrenMatching(parent: number, text: string): number[] {
  const out = execFileSync("ps", ["-eo", "pid=,ppid=,stat=,args="], { encoding: "utf8" });
  const pids: number[] = [];
  for (const line of out.split("\n")) {
    const [pid, ppid, state, ...args] = line.trim().split(/\s+/);
    if (pid === undefined || state === undefined || state.startsWith("Z") || Number(ppid) !== parent) continue;
    if (args.join(" ").includes(text)) pids.push(Number(pid));
  }
  return pids;
}
