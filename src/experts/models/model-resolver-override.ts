import type { LanguageModel } from "ai";
import type { ExpertConfig } from "../../catalog/catalog-schema";

/**
 * Test seam: the ExpertSession Durable Object runs in the same isolate as the workerd tests, so a
 * test swaps in a scripted model here. Only code can set it (no route or config reaches this
 * module), and `resolveModel` honours it only when ENVIRONMENT is "test".
 */
export type ModelResolver = (expert: ExpertConfig) => LanguageModel | Promise<LanguageModel>;

let override: ModelResolver | undefined;

export function setModelResolverForTests(resolver: ModelResolver | undefined): void {
  override = resolver;
}

export function modelResolverOverride(): ModelResolver | undefined {
  return override;
}
