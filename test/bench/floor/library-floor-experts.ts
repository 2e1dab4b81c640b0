/**
 * The experts of the library floor D (floor-worker.ts `/d/mcp`): the same model ids and tool
 * whitelists as the bench catalog's experts of the same names (bench-catalog.ts), so the fake
 * model (bench-model-script.ts, which picks its scripted answer by model id and the query's
 * `steps=N`) answers D exactly as it answers the product. figures/floor-goals.ts checks this
 * table against the catalog it loaded before it measures anything.
 *
 * Plain data: the floor Worker's bundle and the bench's Node code both import it.
 */
export const LIBRARY_FLOOR_EXPERTS = {
  no_tools: { model: "no-tools", tools: { echo: ["echo"] } },
  one_call: { model: "one-call", tools: { echo: ["echo", "sleep"] } },
  many_steps: { model: "steps", tools: { echo: ["echo"] } },
} as const satisfies Record<string, { model: string; tools: Record<string, readonly string[]> }>;

export type LibraryFloorExpert = keyof typeof LIBRARY_FLOOR_EXPERTS;

export const LIBRARY_FLOOR_EXPERT_NAMES = Object.keys(LIBRARY_FLOOR_EXPERTS) as LibraryFloorExpert[];

/** The product's step budget and output-token cap for these experts (bench-catalog.ts BUDGET). */
export const LIBRARY_FLOOR_BUDGET = { maxSteps: 25, maxOutputTokens: 4_096 } as const;
