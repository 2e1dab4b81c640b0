import { z } from "zod";
import { isLoopbackHost } from "./loopback-host";

/**
 * `ALLOWED_ORIGINS`: browser origins (scheme, host, port) whose pages may call the MCP
 * endpoints, e.g. `https://claude.ai`. Origins are compared exactly, so each entry must be a
 * bare origin: no path, query or trailing wildcard. https only, except loopback hosts (a local
 * tool's page). Returned normalised the way browsers send the `Origin` header.
 */
export const allowedOriginsSchema = z
  .string()
  .optional()
  .transform((value, ctx) => {
    const origins: string[] = [];
    for (const entry of (value ?? "")
      .split(",")
      .map((item) => item.trim())
      .filter((item) => item.length > 0)) {
      const problem = originProblem(entry);
      if (problem) {
        ctx.addIssue({ code: "custom", message: `"${entry}" ${problem}` });
        continue;
      }
      origins.push(new URL(entry).origin);
    }
    return origins;
  });

function originProblem(entry: string): string | undefined {
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    return "is not an origin like https://claude.ai";
  }
  if (url.protocol !== "https:" && !(url.protocol === "http:" && isLoopbackHost(url.hostname))) return "must use https (http only on 127.0.0.1/localhost)";
  if (url.username || url.password || url.search || url.hash || (url.pathname !== "/" && url.pathname !== "")) {
    return "must be a bare origin (scheme://host[:port]) without path, query or credentials";
  }
  if (url.hostname.includes("*")) return "has a wildcard: list each origin";
  return undefined;
}
