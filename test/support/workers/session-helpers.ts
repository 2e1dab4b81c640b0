import { env } from "cloudflare:test";
import type { UserProps } from "../../../src/auth/user-props";
import type { ExpertCallRequest } from "../../../src/experts/core/call-types";
import { sessionStub } from "../../../src/experts/session/session-name";

export const carol: UserProps = { userId: "u-carol", login: "carol", role: "member" };

export function sessionOf(skill: string, user: UserProps = carol) {
  return sessionStub(env, skill, user.userId);
}

export function callOf(skill: string, expert: string, query: string, extra: Partial<ExpertCallRequest> = {}, user: UserProps = carol): ExpertCallRequest {
  return { runId: crypto.randomUUID(), skill, expert, args: { query }, user, ...extra };
}

export const expertOf = (name: string, internalTools: Record<string, string[]>, budget: Record<string, number> = {}) => ({
  name,
  description: `${name} expert`,
  internal_tools: internalTools,
  provider: "openai-compatible",
  base_url: "http://127.0.0.1:9/v1",
  budget,
});

/** Steps of a run as stored in the session's SQLite, tool calls parsed. */
export interface StoredStep {
  step: number;
  calls: Array<{ name: string; status: string; error?: string }>;
}
