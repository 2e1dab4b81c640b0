import type { PathSegment } from "../catalog-problems";
import type { FindingSink } from "./finding-sink";
import { isRawObject, objectEntries, type RawObject } from "./raw-json";

/**
 * A server with `auth` gets its Authorization header from the caller's connection (the
 * server's own OAuth), so the catalog may not also carry one: the two would fight over the
 * header, and a static credential would make every member act as its owner (the confused
 * deputy `auth` exists to end).
 */
export function checkServerAuth(id: string, server: RawObject, serverPath: readonly PathSegment[], sink: FindingSink): void {
  const auth = server.auth;
  if (!isRawObject(auth)) return;
  const authPath = [...serverPath, "auth"];
  for (const [name] of objectEntries(server.headers)) {
    if (name.toLowerCase() !== "authorization") continue;
    sink.add(
      [...serverPath, "headers", name],
      `server \`${id}\` signs in with \`auth\` (OAuth), so it cannot also send a static \`${name}\` header`,
      "remove this header (each member's token is sent instead), or remove `auth` to keep one shared credential",
    );
  }
  if (server.binding !== undefined) {
    sink.add(
      [...serverPath, "binding"],
      `server \`${id}\` has \`auth\`, which needs the server's own URL for OAuth discovery, but it is reached through a service binding`,
      "use `url` (the server's https MCP endpoint) instead of `binding`, or remove `auth`",
    );
  }
  if (auth.client_secret_secret !== undefined && auth.client_id_secret === undefined) {
    sink.add(
      [...authPath, "client_secret_secret"],
      "`client_secret_secret` is set without `client_id_secret`: a client secret belongs to a registered client id",
      "add `client_id_secret` naming the Worker secret that holds the client id, or remove `client_secret_secret`",
    );
  }
  // Both pin a pre-registered client's credentials; a client Slipsnisse registers itself
  // (dynamic registration) belongs to whichever issuer it registered at.
  for (const field of ["issuer", "token_endpoint"] as const) {
    if (auth[field] === undefined || auth.client_id_secret !== undefined) continue;
    sink.add(
      [...authPath, field],
      `\`${field}\` pins a pre-registered client, but \`client_id_secret\` is not set`,
      `add \`client_id_secret\` (and \`client_secret_secret\`) naming the Worker secrets of the client registered at that issuer, or remove \`${field}\``,
    );
  }
  if (auth.grant === "client_credentials") {
    // A machine's own credentials act as one account: that is a team connection by definition,
    // and the grant needs the client's id and secret to authenticate with.
    if (auth.connection !== "team") {
      sink.add(
        [...authPath, "grant"],
        '`grant: "client_credentials"` acts as one machine account for everyone, so it needs `connection: "team"`',
        'set `connection: "team"` (every member then acts as that account), or remove `grant` so each member signs in',
      );
    }
    for (const field of ["client_id_secret", "client_secret_secret"] as const) {
      if (auth[field] !== undefined) continue;
      sink.add(
        [...authPath, field],
        `\`grant: "client_credentials"\` needs \`${field}\`: the token is requested with the client's id and secret, which a server does not register on the fly`,
        `register a client at the server's authorization server, put its ${field === "client_id_secret" ? "id" : "secret"} in a Worker secret (npx wrangler secret put NAME) and name it in \`${field}\``,
      );
    }
  }
}
