import { expertSchema, toolPolicySchema } from "../../src/catalog/catalog-schema";
import type { Budget, ExpertConfig, ToolPolicy } from "../../src/catalog/catalog-schema";

export function makeExpert(
  fields: {
    internal_tools?: Record<string, string[]>;
    budget?: Partial<Budget>;
    system_prompt?: string;
    provider?: ExpertConfig["provider"];
    model?: string;
    base_url?: string;
    api_key_secret?: string;
    mode?: ExpertConfig["mode"];
    output_schema?: Record<string, unknown>;
  } = {},
): ExpertConfig {
  const { budget, ...rest } = fields;
  return expertSchema.parse({
    name: "research",
    description: "Researches things",
    internal_tools: { docs: ["search", "read"] },
    ...rest,
    budget: { ...budget },
  });
}

export function makePolicy(policy: Partial<ToolPolicy> = {}): ToolPolicy {
  return toolPolicySchema.parse(policy);
}
