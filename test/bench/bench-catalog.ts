import type { CatalogInput } from "../../src/catalog/catalog-schema";
import type { ManyToolsServer } from "./many-tools-server";

const BUDGET = { max_steps: 25, timeout_ms: 60_000, max_output_tokens: 4_096, max_tool_calls: 30, max_tool_result_bytes: 65_536 };

export function expert(name: string, model: string, tools: Record<string, string[]>, modelBaseUrl: string, description: string) {
  return {
    name,
    description,
    internal_tools: tools,
    provider: "openai-compatible" as const,
    base_url: modelBaseUrl,
    model,
    budget: BUDGET,
  };
}

/**
 * Three skills: `default` (/mcp) with one expert per latency scenario over the fixture echo
 * server, `limited` (/s/limited/mcp) the same no_tools expert under per-user and skill-wide
 * limits, and `wide` (/s/wide/mcp) with two experts over three servers of 72 tools, the shape
 * whose tool surface the context figure compares.
 */
export function benchCatalog(echoMcpUrl: string, wide: ManyToolsServer[], modelBaseUrl: string): CatalogInput {
  const wideServers = Object.fromEntries(wide.map((s) => [s.name, { url: s.url, transport: "streamable-http" as const }]));
  const pick = (server: ManyToolsServer, count: number) => server.toolNames.slice(0, count);
  return {
    skills: {
      default: {
        servers: { echo: { url: echoMcpUrl, transport: "streamable-http" } },
        experts: [
          expert("one_call", "one-call", { echo: ["echo", "sleep"] }, modelBaseUrl, "One downstream call, then an answer."),
          expert("many_steps", "steps", { echo: ["echo"] }, modelBaseUrl, "N sequential downstream calls."),
          expert("fan_out", "fan-out", { echo: ["sleep"] }, modelBaseUrl, "Six parallel downstream calls in one step."),
          expert("read_big", "big", { echo: ["big"] }, modelBaseUrl, "Reads a 50 KB result and summarises it."),
          expert("no_tools", "no-tools", { echo: ["echo"] }, modelBaseUrl, "Answers without any downstream call."),
          {
            ...expert("route_call", "one-call", { echo: ["echo"] }, modelBaseUrl, "Routes to one downstream call; its result is the answer."),
            mode: "route" as const,
          },
        ],
      },
      // tools/list like for like with floor A's one tool (the goal row): one expert, nothing else.
      single: {
        servers: { echo: { url: echoMcpUrl, transport: "streamable-http" } },
        experts: [expert("no_tools", "no-tools", { echo: ["echo"] }, modelBaseUrl, "Answers without any downstream call.")],
      },
      // The cost of limits on a call (AB `limited`): per-user and skill-wide counters, never reached.
      limited: {
        limits: {
          per_user: { runs_per_day: 1_000_000, tokens_per_day: 1_000_000_000 },
          per_skill: { runs_per_day: 1_000_000, runs_in_flight: 1_000 },
        },
        servers: { echo: { url: echoMcpUrl, transport: "streamable-http" } },
        experts: [expert("no_tools", "no-tools", { echo: ["echo"] }, modelBaseUrl, "Answers without any downstream call.")],
      },
      wide: {
        servers: wideServers,
        experts:
          wide.length < 3
            ? []
            : [
                expert(
                  "triage_issue",
                  "no-tools",
                  { [wide[0]!.name]: pick(wide[0]!, 6), [wide[1]!.name]: pick(wide[1]!, 6) },
                  modelBaseUrl,
                  "Finds the issues and tickets behind a bug report and says who owns them and what state they are in.",
                ),
                expert(
                  "research_docs",
                  "no-tools",
                  { [wide[2]!.name]: pick(wide[2]!, 8) },
                  modelBaseUrl,
                  "Answers a question from the team wiki, citing the pages it used.",
                ),
              ],
      },
    },
  };
}
