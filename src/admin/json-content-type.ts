import type { MiddlewareHandler } from "hono";
import { UnsupportedMediaTypeError } from "./admin-errors";

/** `application/json`, with or without parameters such as `charset=utf-8`. */
export function isJsonContentType(contentType: string | null): boolean {
  return contentType !== null && contentType.split(";")[0]?.trim().toLowerCase() === "application/json";
}

/** Whether the request carries a body, judged by its headers (what a body-less POST leaves out). */
function declaresBody(request: Request): boolean {
  return request.headers.has("content-type") || Number(request.headers.get("content-length") ?? "0") > 0 || request.headers.has("transfer-encoding");
}

/**
 * The admin API and /me/api take JSON only: a request with any other body is a 415, in every
 * auth mode, also on routes that read no body (a restore, a delete). A browser sends text/plain,
 * form and multipart bodies cross-site without a preflight, so this is what keeps a page on
 * another site from writing. Requests without a body pass.
 */
export function jsonBodiesOnly(): MiddlewareHandler {
  return async (c, next) => {
    const request = c.req.raw;
    if (request.method === "GET" || request.method === "HEAD" || request.method === "OPTIONS" || !declaresBody(request)) return next();
    const contentType = request.headers.get("content-type");
    if (isJsonContentType(contentType)) return next();
    const refusal = new UnsupportedMediaTypeError(contentType);
    return c.json({ error: refusal.message, fix: refusal.fix }, 415);
  };
}
