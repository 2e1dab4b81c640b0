const encoder = new TextEncoder();
const decoder = new TextDecoder();

export interface TruncatedText {
  text: string;
  truncated: boolean;
  /** UTF-8 bytes of the original text. */
  totalBytes: number;
  /** UTF-8 bytes of the original text that were kept. */
  shownBytes: number;
}

/**
 * Cuts `text` to at most `maxBytes` UTF-8 bytes without splitting a character, and says so
 * in a marker the model can read (the marker itself is not counted).
 */
export function truncateUtf8(text: string, maxBytes: number): TruncatedText {
  const bytes = encoder.encode(text);
  if (bytes.byteLength <= maxBytes) {
    return { text, truncated: false, totalBytes: bytes.byteLength, shownBytes: bytes.byteLength };
  }
  let cut = Math.max(0, maxBytes);
  // Back off continuation bytes (10xxxxxx) so the cut lands on a character boundary.
  while (cut > 0 && ((bytes[cut] ?? 0) & 0xc0) === 0x80) cut--;
  const kept = decoder.decode(bytes.subarray(0, cut));
  return {
    text: `${kept}\n[… truncated: showed ${cut} of ${bytes.byteLength} bytes]`,
    truncated: true,
    totalBytes: bytes.byteLength,
    shownBytes: cut,
  };
}
