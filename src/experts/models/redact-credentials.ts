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

/**
 * Whether any of the shapes above may occur: one scan, where the replacements are four. Every
 * text a run records passes here and almost none holds a credential.
 */
const ANY_SHAPE = /bearer|\b[spr]k-|\bAIza|[?&](?:key|api_key|apikey|token|access_token)=/i;

export function redactCredentialShapes(text: string): string {
  if (!ANY_SHAPE.test(text)) return text;
  return REPLACEMENTS.reduce((out, [pattern, replacement]) => out.replace(pattern, replacement), text);
}
