import { z } from "zod";
import type { AdminContext } from "./admin-context";
import { InvalidParameterError } from "./admin-errors";

/**
 * A time in a query parameter: epoch milliseconds, or an ISO 8601 date (`2026-11-23`, UTC
 * midnight) or date-time (`2026-11-23T17:00:00Z`).
 */
export const timeParam = z
  .string()
  .trim()
  .transform((value, ctx) => {
    const ms = /^\d{1,15}$/.test(value) ? Number(value) : /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:\d{2}))?$/.test(value) ? Date.parse(value) : Number.NaN;
    if (!Number.isFinite(ms)) {
      ctx.addIssue({ code: "custom", message: "must be epoch milliseconds or an ISO 8601 date or date-time, such as 2026-11-23 or 2026-11-23T17:00:00Z" });
      return z.NEVER;
    }
    return ms;
  });

/** What each query parameter's refusal tells the caller to do instead. */
export type QueryFixes<T extends z.ZodRawShape> = { [K in keyof T]: string };

/**
 * Validates the request's query parameters against `schema`; the first problem becomes a 400
 * naming the parameter, what was wrong and the fix.
 */
export function parseQuery<T extends z.ZodRawShape>(c: AdminContext, schema: z.ZodObject<T>, fixes: QueryFixes<T>): z.output<z.ZodObject<T>> {
  const raw: Record<string, string> = {};
  for (const key of Object.keys(schema.shape)) {
    const value = c.req.query(key);
    if (value !== undefined && value !== "") raw[key] = value;
  }
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const key = String(issue?.path[0] ?? "query");
  throw new InvalidParameterError(
    key,
    `query parameter is invalid: ${issue?.message ?? "unreadable"}`,
    fixes[key as keyof T] ?? "Check the parameter against the admin API table in docs/operating.md#admin-api.",
  );
}
