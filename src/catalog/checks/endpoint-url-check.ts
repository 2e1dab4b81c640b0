import type { PathSegment } from "../catalog-problems";
import { endpointUrlProblem, type EndpointUrlProblem } from "../endpoint-url-rules";
import type { FindingSink } from "./finding-sink";

/** What the URL addresses: a downstream MCP server's `url` or an expert's model `base_url`. */
export type EndpointRole = "server" | "model";

const LABEL: Record<EndpointRole, string> = { server: "the server's MCP endpoint `url`", model: "the model endpoint `base_url`" };
const EXAMPLE: Record<EndpointRole, string> = { server: '"https://mcp.example.com/mcp"', model: '"https://openrouter.ai/api/v1"' };
const CREDENTIALS_GO: Record<EndpointRole, string> = {
  server: "send credentials as a header with a `${SECRET_NAME}` reference",
  model: "put the API key in a Worker secret and name it in `api_key_secret`",
};

/**
 * Refuses at validation what the Worker would refuse at every call in any environment
 * (endpoint-url-rules.ts): a scheme other than http(s), credentials in the URL, a non-public IP
 * literal or metadata host, plain http to a non-loopback host. Loopback passes: it is how local
 * development reaches Ollama or a local MCP server, and the runtime guard refuses it elsewhere.
 * Unparseable URLs are left to the schema's own URL check.
 */
export function checkEndpointUrl(raw: unknown, role: EndpointRole, at: readonly PathSegment[], sink: FindingSink): void {
  if (typeof raw !== "string") return;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return;
  }
  const problem = endpointUrlProblem(url);
  if (problem === null || problem.kind === "loopback") return;
  const { message, fix } = describe(problem, role);
  sink.add(at, message, fix);
}

function describe(problem: EndpointUrlProblem, role: EndpointRole): { message: string; fix: string } {
  const label = LABEL[role];
  const publicUrl = `use the endpoint's public https URL, e.g. ${EXAMPLE[role]}`;
  switch (problem.kind) {
    case "scheme":
      return {
        message: `${label} uses \`${problem.shown}\`, which is not a valid http(s) URL: the Worker calls it over https (http only on loopback in local development)`,
        fix: `${publicUrl}${role === "model" ? ', or "http://127.0.0.1:11434/v1" for a local Ollama in local development' : ""}`,
      };
    case "credentials":
      return {
        message: `${label} (${problem.shown}) has credentials in the URL (user:password@), which would travel and be logged as part of the address`,
        fix: `remove the user:password part and ${CREDENTIALS_GO[role]}`,
      };
    case "address":
      return {
        message: `${label} points at a ${problem.reason} (${problem.shown}); the Worker never calls private, link-local, metadata or other non-public addresses`,
        fix: `${publicUrl}; loopback (127.0.0.1, localhost) is accepted for local development only`,
      };
    case "plain-http":
      return {
        message: `${label} uses plain http to ${problem.shown}; http is accepted only for loopback in local development`,
        fix: publicUrl,
      };
    case "loopback":
      return { message: `${label} is a loopback address`, fix: "loopback is accepted in local development only" };
  }
}
