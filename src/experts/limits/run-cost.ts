import { z } from "zod";

// The skill's `pricing` (per provider and model, per million tokens in and out), read loosely so
// this module works whether or not the catalog on this deployment defines prices yet.
const pricingShape = z.object({
  pricing: z.record(z.string(), z.record(z.string(), z.object({ input_per_million: z.number(), output_per_million: z.number() }))).optional(),
});

/**
 * What a run cost in USD at the skill's catalog prices, or 0 when its model has no price: cost
 * limits count priced runs only, never a guessed figure.
 */
export function runCostUsd(skillConfig: unknown, provider: string, model: string | undefined, inputTokens: number, outputTokens: number): number {
  const parsed = pricingShape.safeParse(skillConfig);
  if (!parsed.success || model === undefined) return 0;
  const price = parsed.data.pricing?.[provider]?.[model];
  if (!price) return 0;
  return (inputTokens * price.input_per_million + outputTokens * price.output_per_million) / 1_000_000;
}
