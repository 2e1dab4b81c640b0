import { SECRET_NAME_PATTERN } from "../catalog-schema";
import type { PathSegment } from "../catalog-problems";
import type { FindingSink } from "./finding-sink";
import { toSecretName } from "./name-suggestions";
import { objectEntries } from "./raw-json";

const SECRET_REFERENCE = /\$\{([^}]*)\}/g;
/** Header names whose value is a credential whatever it looks like. */
const CREDENTIAL_HEADER = /^(proxy-)?authorization$|api[-_]?key|token|secret|password|cookie/i;
/** Values that carry a credential whatever the header is called. */
const CREDENTIAL_SCHEME = /^(bearer|basic|token|apikey)\s+\S/i;
/** A reference that is clearly a name (no digits, short), so echoing it cannot leak a token. */
const NAME_LIKE = /^[A-Za-z_]{1,32}$/;

/**
 * Secrets must never enter D1 or KV: header values may only reference Worker secrets by name
 * (`${NAME}`), resolved at connect time. Messages never repeat a header value.
 */
export function checkHeaders(serverId: string, headers: unknown, at: readonly PathSegment[], sink: FindingSink): void {
  for (const [name, value] of objectEntries(headers)) {
    if (typeof value !== "string") continue;
    const headerPath = [...at, name];
    const suggested = toSecretName(serverId, name.toLowerCase() === "authorization" ? "token" : name);
    const references = [...value.matchAll(SECRET_REFERENCE)].map((match) => match[1] ?? "");
    for (const reference of references.filter((ref) => !SECRET_NAME_PATTERN.test(ref))) {
      const better = NAME_LIKE.test(reference) ? toSecretName(reference) : suggested;
      sink.add(
        headerPath,
        `header \`${name}\` references a secret whose name is not a valid Worker secret name (UPPER_SNAKE_CASE: A-Z, 0-9, _, starting with a letter)`,
        `name the secret \`${better}\` (\`wrangler secret put ${better}\`) and write \`\${${better}}\` in the header`,
      );
    }
    if (references.length > 0 || value.trim() === "") continue;
    if (CREDENTIAL_HEADER.test(name) || CREDENTIAL_SCHEME.test(value)) {
      const scheme = /^(\w+)\s+\S/.exec(value)?.[1];
      const written = scheme && CREDENTIAL_SCHEME.test(value) ? `${scheme} \${${suggested}}` : `\${${suggested}}`;
      sink.add(
        headerPath,
        `header \`${name}\` holds a literal credential; secrets must never be stored in the catalog (D1/KV), only referenced by name`,
        `store it with \`wrangler secret put ${suggested}\` and write \`${written}\``,
      );
    }
  }
}
