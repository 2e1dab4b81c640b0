import { base64Url, base64UrlDecode } from "../../base64url";
import { readSecret } from "../../env";
import { ConnectionsKeyError } from "./connection-errors";

/** Enough key material for AES-256 (a base64 of 32 random bytes is 44 characters). */
const MIN_KEY_LENGTH = 32;
const VERSION = "v1";

/**
 * AES-256-GCM (WebCrypto) for connection secrets at rest: tokens, PKCE verifiers, client
 * secrets. The key is SHA-256 of the CONNECTIONS_KEY Worker secret, so any high-entropy string
 * works. Each value gets a fresh 96-bit IV, and `context` (owner and server) is bound as
 * additional data, so a ciphertext moved to another row or object does not decrypt.
 */
export class TokenCipher {
  private constructor(private readonly key: CryptoKey) {}

  static async fromEnv(env: Env): Promise<TokenCipher> {
    const material = readSecret(env, "CONNECTIONS_KEY");
    if (material === undefined) throw new ConnectionsKeyError("is not set");
    if (material.length < MIN_KEY_LENGTH) throw new ConnectionsKeyError(`is ${material.length} characters; it needs at least ${MIN_KEY_LENGTH}`);
    const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(material));
    return new TokenCipher(await crypto.subtle.importKey("raw", digest, { name: "AES-GCM" }, false, ["encrypt", "decrypt"]));
  }

  async seal(value: unknown, context: string): Promise<string> {
    const iv = crypto.getRandomValues(new Uint8Array(12));
    const plain = new TextEncoder().encode(JSON.stringify(value));
    const sealed = await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: new TextEncoder().encode(context) }, this.key, plain);
    return `${VERSION}.${base64Url(iv)}.${base64Url(new Uint8Array(sealed))}`;
  }

  /** undefined when the value was sealed with another key or context, or is not ours: the caller treats it as absent. */
  async open(sealed: string, context: string): Promise<unknown> {
    const [version, iv, body, extra] = sealed.split(".");
    if (version !== VERSION || iv === undefined || body === undefined || extra !== undefined) return undefined;
    try {
      const plain = await crypto.subtle.decrypt(
        { name: "AES-GCM", iv: base64UrlDecode(iv), additionalData: new TextEncoder().encode(context) },
        this.key,
        base64UrlDecode(body),
      );
      return JSON.parse(new TextDecoder().decode(plain)) as unknown;
    } catch {
      return undefined;
    }
  }
}
