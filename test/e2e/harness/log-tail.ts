/** Keeps the last lines a child process printed, for error messages. */
export class LogTail {
  readonly #lines: string[] = [];
  readonly #maxLines: number;
  #partial = "";

  constructor(maxLines = 80) {
    this.#maxLines = maxLines;
  }

  push(chunk: Buffer | string): void {
    const text = this.#partial + chunk.toString();
    const parts = text.split("\n");
    this.#partial = parts.pop() ?? "";
    for (const line of parts) {
      this.#lines.push(line);
      if (this.#lines.length > this.#maxLines) this.#lines.shift();
    }
  }

  text(): string {
    return [...this.#lines, this.#partial].join("\n").trimEnd();
  }
}
