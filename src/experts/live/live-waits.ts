import { type LanguageModel, wrapLanguageModel } from "ai";
import type { ToolSource } from "../../downstream/downstream-types";
import type { UserPrompter } from "../core/run-types";
import { cutName, type LiveWait } from "./live-events";

type Wait = Omit<LiveWait, "since">;

/** Which wait a page shows when several are open at once: the one a human or a server holds up first. */
const SHOWN_FIRST: readonly LiveWait["on"][] = ["approval", "question", "tool", "server", "model"];

/**
 * What one run waits on, told to the live feed as each wait begins and ends (never once a
 * second: the event carries when the wait began, and the page counts). It sees only names (the
 * model, `server__tool`, a server id), never arguments, results or answers. Wraps the run's model,
 * tools and prompter; the run goes exactly as it would without it.
 */
export class RunWaits {
  private readonly open = new Map<number, LiveWait>();
  private nextId = 0;
  private shown: LiveWait | null = null;

  constructor(private readonly changed: (waiting: LiveWait | null) => void) {}

  model(model: LanguageModel): LanguageModel {
    if (typeof model === "string") return model;
    return wrapLanguageModel({
      model,
      middleware: {
        specificationVersion: "v4",
        wrapGenerate: ({ doGenerate }) => this.during({ on: "model" }, doGenerate),
        wrapStream: ({ doStream }) => this.during({ on: "model" }, doStream),
      },
    });
  }

  tools(source: ToolSource): ToolSource {
    return {
      listTools: (serverId, options) => this.during({ on: "server", name: serverId }, () => source.listTools(serverId, options)),
      callTool: (serverId, toolName, args, options) =>
        this.during({ on: "tool", name: `${serverId}__${toolName}` }, () => source.callTool(serverId, toolName, args, options)),
      ...(source.withheldTools ? { withheldTools: (serverId: string) => source.withheldTools?.(serverId) ?? [] } : {}),
      ...(source.skill === undefined ? {} : { skill: source.skill }),
    };
  }

  prompter(ask: UserPrompter): UserPrompter {
    return (prompt) =>
      this.during(prompt.kind === "approval" ? { on: "approval", name: `${prompt.server}__${prompt.tool}` } : { on: "question" }, () => ask(prompt));
  }

  /** Runs `work` as an open wait; what the page shows changes only when the wait shown does. */
  async during<T>(wait: Wait, work: () => PromiseLike<T>): Promise<T> {
    const id = this.nextId++;
    this.open.set(id, { ...wait, ...(wait.name === undefined ? {} : { name: cutName(wait.name) }), since: Date.now() });
    this.report();
    try {
      return await work();
    } finally {
      this.open.delete(id);
      this.report();
    }
  }

  private report(): void {
    const next = this.current();
    const same =
      next === null
        ? this.shown === null
        : this.shown !== null && next.on === this.shown.on && next.name === this.shown.name && next.since === this.shown.since;
    if (same) return;
    this.shown = next;
    try {
      this.changed(next);
    } catch {
      // The feed is best effort; the run goes on.
    }
  }

  /** The first kind in SHOWN_FIRST with a wait open; parallel calls of that kind are named together, since the earliest began. */
  private current(): LiveWait | null {
    // Most of a run is one wait at a time (the model, then a tool): that wait, as it is stored.
    if (this.open.size <= 1) return this.open.values().next().value ?? null;
    const open = [...this.open.values()];
    for (const on of SHOWN_FIRST) {
      const waits = open.filter((wait) => wait.on === on);
      const first = waits[0];
      if (first === undefined) continue;
      const names = [...new Set(waits.flatMap((wait) => (wait.name === undefined ? [] : [wait.name])))];
      const since = Math.min(...waits.map((wait) => wait.since));
      return { on, ...(names.length > 0 ? { name: cutName(names.join(", ")) } : {}), since };
    }
    return null;
  }
}
