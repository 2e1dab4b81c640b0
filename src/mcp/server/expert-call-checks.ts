import type { CallToolResult } from "@modelcontextprotocol/server";
import type { ExpertConfig } from "../../catalog/catalog-schema";
import { log } from "../../observability/logger";
import { inputOverLimit } from "./expert-input-limit";
import { missingArguments, type ThreadSplit } from "./expert-tool-schema";

export type PreparedCall = ({ ok: true } & ThreadSplit) | { ok: false; refusal: CallToolResult };

/**
 * The checks every expert call passes before it reaches the session, a plain tools/call and one
 * run as a task alike: arguments within the expert's bound, and the required ones present
 * unless the call replies to the expert's question or decides an approval.
 */
export function prepareExpertCall(skill: string, expert: ExpertConfig, split: ThreadSplit): PreparedCall {
  const { args, answer, approve } = split;
  // A reply to an ask-back question reaches the model too, so it counts toward the bound.
  const tooLarge = inputOverLimit(expert, answer === undefined ? args : { ...args, answer });
  if (tooLarge) {
    log("warn", "expert arguments refused", { skill, expert: expert.name, bytes: tooLarge.bytes, limit: tooLarge.limit });
    return { ok: false, refusal: { isError: true, content: [{ type: "text", text: tooLarge.toolMessage }] } };
  }
  const missing = answer === undefined && approve === undefined ? missingArguments(expert, args) : [];
  if (missing.length > 0) {
    const names = missing.map((name) => `\`${name}\``).join(", ");
    const text = `Expert "${expert.name}" needs ${names}: pass ${missing.length === 1 ? "it" : "them"}, or reply to its question with \`thread\` and \`answer\`.`;
    return { ok: false, refusal: { isError: true, content: [{ type: "text", text }] } };
  }
  return { ok: true, ...split };
}
