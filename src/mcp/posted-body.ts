/**
 * A POSTed JSON-RPC body as the checks before the MCP SDK see it: decoded and parsed at most once
 * however many of them look (depth, cancels, mid-call replies, `initialize`, resumable calls,
 * both task forms, tools/list). Both steps are lazy, since most checks decide on a substring and
 * most bodies never need the JSON here (the SDK parses the body again: it takes a Request).
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
