/**
 * Provider error texts are shown to the orchestrator, and some echo request details. Cut anything
 * that looks like a credential: bearer tokens, common API key shapes, key=... query parameters.
 */
const REPLACEMENTS: Array<[RegExp, string]> = [
  [/bearer\s+[\w.~+/=-]+/gi, "Bearer [redacted]"],
  [/\b(sk|pk|rk)-[\w-]{8,}/g, "[redacted]"],
  [/\bAIza[\w-]{20,}/g, "[redacted]"],
  [/([?&](?:key|api_key|apikey|token|access_token)=)[^&\s]+/gi, "$1[redacted]"],
];

export function redactCredentialShapes(text: string): string {
  return REPLACEMENTS.reduce((out, [pattern, replacement]) => out.replace(pattern, replacement), text);
}
