/**
 * A POSTed JSON-RPC body: its bytes (the depth check reads them before anything parses,
 * early-refusals.ts), decoded and parsed at most once, lazily, for the early refusals and the
 * classification (inbound-post.ts); the SDK gets the parsed value and parses no more.
 */
export class PostedBody {
  private decoded: string | undefined;
  private parsed: { value: unknown } | undefined;

  constructor(readonly bytes: Uint8Array<ArrayBuffer>) {}

  get text(): string {
    this.decoded ??= new TextDecoder().decode(this.bytes);
    return this.decoded;
  }

  includes(needle: string): boolean {
    return this.text.includes(needle);
  }

  /**
   * The parsed JSON, or undefined when the body is not JSON. Runs after the depth check
   * (early-refusals.ts); V8's JSON.parse does not recurse, so even a deep body cannot overflow it.
   */
  json(): unknown {
    if (this.parsed === undefined) {
      try {
        this.parsed = { value: JSON.parse(this.text) };
      } catch {
        this.parsed = { value: undefined };
      }
    }
    return this.parsed.value;
  }
}
