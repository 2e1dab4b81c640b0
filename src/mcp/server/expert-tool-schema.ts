import type { JsonSchemaType } from "@modelcontextprotocol/server";
import type { ExpertConfig, ToolPolicy } from "../../catalog/catalog-schema";

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

export const APPROVE_ARGUMENT = "approve";

const approveProperty = {
  type: "boolean",
  description: 'Only to decide a call this expert waits to have approved ("Approval needed"): true runs it, false refuses it. Pass that answer\'s `thread`.',
} as const;

/**
 * Whether a call of this skill may ever need approval (a `requires_approval` pattern, or a
 * destructive downstream tool while `approve_destructive` is on); only then does an expert's
 * schema offer `approve`. Which tool needs it is known only once its server is listed: tools/list
 * narrows it with the last known listings (expertMayNeedApproval); a call accepts it whenever the
 * policy may need it.
 */
export function mayNeedApproval(policy: Pick<ToolPolicy, "requires_approval" | "approve_destructive"> | undefined): boolean {
  return policy !== undefined && (policy.requires_approval.length > 0 || policy.approve_destructive);
}

type ObjectSchema = JsonSchemaType & { properties?: Record<string, unknown>; required?: string[] };

/**
 * The schema the orchestrator sees: the expert's own arguments plus the optional `thread`
 * handle, and for an `ask_back` expert the optional `answer`. A reply carries only `thread` and
 * `answer`, so an ask_back expert's schema lists no `required` (which JSON Schema cannot make
 * conditional without a top-level anyOf, which several clients refuse); missingArguments
 * checks them for a call that is not a reply. The catalog validator guarantees `arguments` is
 * an object schema.
 */
export function expertInputSchema(expert: ExpertConfig, policy?: ToolPolicy, offerApprove = mayNeedApproval(policy)): JsonSchemaType {
  const schema = expert.arguments as ObjectSchema;
  const properties = { ...schema.properties };
  if (properties[THREAD_ARGUMENT] === undefined) properties[THREAD_ARGUMENT] = threadProperty;
  if (offerApprove && properties[APPROVE_ARGUMENT] === undefined) properties[APPROVE_ARGUMENT] = approveProperty;
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
/** An expert call's own arguments apart from the reply fields the server adds to its schema. */
export interface ThreadSplit {
  args: Record<string, unknown>;
  thread?: string;
  answer?: string;
  approve?: boolean;
}

export function splitThread(args: Record<string, unknown>, expert?: ExpertConfig): ThreadSplit {
  const { [THREAD_ARGUMENT]: thread, ...rest } = args;
  let own = rest;
  let approve: boolean | undefined;
  if (expert && (expert.arguments as ObjectSchema).properties?.[APPROVE_ARGUMENT] === undefined && APPROVE_ARGUMENT in own) {
    const { [APPROVE_ARGUMENT]: decision, ...others } = own;
    own = others;
    if (typeof decision === "boolean") approve = decision;
  }
  let answer: string | undefined;
  if (expert?.ask_back && (expert.arguments as ObjectSchema).properties?.[ANSWER_ARGUMENT] === undefined) {
    const { [ANSWER_ARGUMENT]: reply, ...others } = own;
    own = others;
    if (typeof reply === "string") answer = reply;
  }
  return {
    args: own,
    ...(typeof thread === "string" && thread.length > 0 ? { thread } : {}),
    ...(answer === undefined ? {} : { answer }),
    ...(approve === undefined ? {} : { approve }),
  };
}
