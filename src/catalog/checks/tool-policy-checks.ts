import type { PathSegment } from "../catalog-problems";
import type { FindingSink } from "./finding-sink";
import { arrayItems, isRawObject } from "./raw-json";

/**
 * `requires_approval` patterns are matched against `server__tool` names. A pattern that cannot
 * match any tool of the skill would leave a tool the admin meant to guard running unapproved,
 * so it is refused rather than ignored: a pattern without the `__` separator (unless it starts
 * with `*`, which spans servers), or one naming a server the skill does not define.
 */
export function checkToolPolicy(policy: unknown, serverIds: readonly string[], at: readonly PathSegment[], sink: FindingSink): void {
  if (!isRawObject(policy)) return;
  arrayItems(policy.requires_approval).forEach((pattern, index) => {
    if (typeof pattern !== "string" || pattern.length === 0) return;
    const path = [...at, "requires_approval", index];
    const separator = pattern.indexOf("__");
    if (separator < 0) {
      if (pattern.startsWith("*")) return;
      sink.add(
        path,
        `approval pattern \`${pattern.slice(0, 80)}\` matches no tool: patterns are matched against \`server__tool\` names`,
        `write \`<server>__${pattern.slice(0, 80)}\` for one server's tool, or \`*__${pattern.slice(0, 80)}\` for that tool on every server`,
      );
      return;
    }
    const server = pattern.slice(0, separator);
    if (/[*?]/.test(server) || serverIds.includes(server)) return;
    sink.add(
      path,
      `approval pattern \`${pattern.slice(0, 80)}\` names server \`${server}\`, which this skill does not define`,
      serverIds.length > 0
        ? `use one of the servers this skill defines: ${serverIds.map((id) => `\`${id}\``).join(", ")}; or \`*\` for every server`
        : `add a server \`${server}\` to the skill's servers (this skill defines none yet)`,
    );
  });
}
