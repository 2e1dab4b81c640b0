import type { FetchLike } from "@modelcontextprotocol/client";
import type { ServerAuth } from "../../catalog/catalog-schema";
import { readSecret } from "../../env";
import { guardedFetch } from "../guarded-fetch";
import { redactSecretValues } from "../secret-headers";

/**
 * Every form a pre-registered client's secret leaves Slipsnisse in, so an echo of any of them
 * can be found: the secret itself, percent-encoded (encodeURIComponent) and form-encoded
 * (application/x-www-form-urlencoded, as client_secret_post sends it), and the Basic
 * credentials of client_secret_basic both as the MCP SDK builds them (base64 of `id:secret`)
 * and as RFC 6749 §2.3.1 spells them (each part form-encoded first, or percent-encoded). A token
 * endpoint that echoes its request would otherwise put a decodable secret into an answer, a run
 * record, a log or a page. Also the JSON-escaped forms, as an echo inside a JSON body shows them.
 */
export function clientSecretForms(clientId: string | undefined, secret: string): string[] {
  if (secret === "") return [];
  const formEncode = (value: string) => new URLSearchParams({ v: value }).toString().slice(2);
  const forms = new Set([secret, encodeURIComponent(secret), formEncode(secret)]);
  for (const value of [...forms]) {
    const json = JSON.stringify(value).slice(1, -1);
    forms.add(json);
    forms.add(json.replaceAll("/", "\\/"));
  }
  if (clientId !== undefined) {
    for (const [id, part] of [
      [clientId, secret],
      [encodeURIComponent(clientId), encodeURIComponent(secret)],
      [formEncode(clientId), formEncode(secret)],
    ] as const) {
      try {
        forms.add(btoa(`${id}:${part}`));
      } catch {
        // btoa takes Latin-1 only; the SDK's btoa fails the same way, so no such Basic form is sent.
      }
    }
  }
  return [...forms];
}

/** The forms of the client secret a server's `auth` names (Worker secrets), or none. */
export function catalogClientSecretForms(env: Env, auth: Pick<ServerAuth, "client_id_secret" | "client_secret_secret"> | undefined): string[] {
  const secret = auth?.client_secret_secret === undefined ? undefined : readSecret(env, auth.client_secret_secret);
  if (secret === undefined) return [];
  const id = auth?.client_id_secret === undefined ? undefined : readSecret(env, auth.client_id_secret);
  return clientSecretForms(id, secret);
}

/** What of a connection target names its client's Worker secrets (a ConnectionTarget). */
export interface ClientSecretTarget {
  serverId: string;
  clientIdSecret?: string;
  clientSecretSecret?: string;
}

/**
 * A token endpoint's error text may echo what it was sent (a hostile or careless server): the
 * client secret, in any form it was sent in, never reaches a run, a log or a page.
 */
export function withoutClientSecret(env: Env, target: ClientSecretTarget, text: string): string {
  const forms = catalogClientSecretForms(env, { client_id_secret: target.clientIdSecret, client_secret_secret: target.clientSecretSecret });
  return forms.length === 0 ? text : redactSecretValues(text, forms);
}

const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

/**
 * The fetch the MCP SDK's OAuth flow uses for a server with a pre-registered client secret: every
 * answer (metadata, token responses, errors) is read and scrubbed of the secret's forms before
 * the SDK sees it, since the SDK puts an error answer's text into its errors and console
 * warnings (an `invalid_client` is logged with its description) where no caller can scrub it.
 */
export function scrubbingFetch(inner: FetchLike, forms: readonly string[]): FetchLike {
  if (forms.length === 0) return inner;
  return async (input, init) => {
    const response = await inner(input, init);
    if (response.body === null || NULL_BODY_STATUSES.has(response.status)) return response;
    const text = await response.text();
    const clean = redactSecretValues(text, forms);
    const headers = new Headers(response.headers);
    if (clean !== text) headers.delete("content-length");
    return new Response(clean, { status: response.status, statusText: response.statusText, headers });
  };
}

/**
 * The fetch of the SDK's OAuth flow for `target`: guarded (public addresses, same-origin
 * redirects), and for a pre-registered client secret, every answer scrubbed of it.
 */
export function oauthFetch(env: Env, target: ClientSecretTarget): FetchLike {
  const forms = catalogClientSecretForms(env, { client_id_secret: target.clientIdSecret, client_secret_secret: target.clientSecretSecret });
  return scrubbingFetch(guardedFetch(target.serverId, env), forms);
}

/** Takes `target`'s client secret, in every form it is sent in, out of an error's text. */
export function scrubFor(env: Env, target: ClientSecretTarget): (text: string) => string {
  return (text) => withoutClientSecret(env, target, text);
}
