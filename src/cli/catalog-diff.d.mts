export declare function diffCatalogs(
  live: { skills: Record<string, Record<string, unknown>> },
  local: { skills: Record<string, Record<string, unknown>> },
): string[];
