import type { JsonSchemaType } from "@modelcontextprotocol/server";
import type { ExpertConfig } from "../catalog/catalog-schema";

export const THREAD_ARGUMENT = "thread";

const threadProperty = {
  type: "string",
  description: "Optional. The thread handle from an earlier answer of this expert, to ask a follow-up in the same conversation.",
} as const;

export const ANSWER_ARGUMENT = "answer";

const answerProperty = {
  type: "string",
  description:
    "Only to reply to a question this expert asked: your reply, with the `thread` of that question. The paused run resumes where it stopped; the other arguments are then not needed.",
} as const;

type ObjectSchema = JsonSchemaType & { properties?: Record<string, unknown>; required?: string[] };

/**
 * The schema the orchestrator sees: the expert's own arguments plus the optional `thread`
 * handle, and for an `ask_back` expert the optional `answer`. A reply carries only `thread` and
 * `answer`, so an ask_back expert's schema lists no `required` (which JSON Schema cannot make
 * conditional without a top-level anyOf, which several clients refuse); missingArguments
 * checks them for a call that is not a reply. The catalog validator guarantees `arguments` is
 * an object schema.
 */
export function expertInputSchema(expert: ExpertConfig): JsonSchemaType {
  const schema = expert.arguments as ObjectSchema;
  const properties = { ...schema.properties };
  if (properties[THREAD_ARGUMENT] === undefined) properties[THREAD_ARGUMENT] = threadProperty;
  if (!expert.ask_back) return { ...schema, type: "object", properties };
  if (properties[ANSWER_ARGUMENT] === undefined) properties[ANSWER_ARGUMENT] = answerProperty;
  const { required: _required, ...rest } = schema;
  return { ...rest, type: "object", properties };
}

/** The expert's required arguments a call left out, when the advertised schema could not say so (see expertInputSchema). */
export function missingArguments(expert: ExpertConfig, args: Record<string, unknown>): string[] {
  const required = (expert.arguments as ObjectSchema).required ?? [];
  return required.filter((name) => args[name] === undefined);
}

/** Splits the validated arguments into the expert's own, the thread handle and a reply to its question. */
export function splitThread(args: Record<string, unknown>, expert?: ExpertConfig): { args: Record<string, unknown>; thread?: string; answer?: string } {
  const { [THREAD_ARGUMENT]: thread, ...rest } = args;
  let own = rest;
  let answer: string | undefined;
  if (expert?.ask_back && (expert.arguments as ObjectSchema).properties?.[ANSWER_ARGUMENT] === undefined) {
    const { [ANSWER_ARGUMENT]: reply, ...others } = rest;
    own = others;
    if (typeof reply === "string") answer = reply;
  }
  return {
    args: own,
    ...(typeof thread === "string" && thread.length > 0 ? { thread } : {}),
    ...(answer === undefined ? {} : { answer }),
  };
}
