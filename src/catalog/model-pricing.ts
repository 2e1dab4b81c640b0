import type { SkillConfig } from "./catalog-schema";

/**
 * What a run's model tokens cost at the skill's catalog prices (per million tokens in and out),
 * or null when the catalog gives no price for that provider and model: never a guessed figure.
 */
export function modelCost(pricing: SkillConfig["pricing"], provider: string, model: string, inputTokens: number, outputTokens: number): number | null {
  const price = pricing?.[provider as keyof NonNullable<SkillConfig["pricing"]>]?.[model];
  if (price === undefined) return null;
  return (inputTokens * price.input_per_million + outputTokens * price.output_per_million) / 1_000_000;
}
