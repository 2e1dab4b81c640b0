export interface Output {
  write(text: string): unknown;
  isTTY?: boolean;
}
export type Input = NodeJS.ReadableStream & { isTTY?: boolean };
export interface CliIo {
  stdout: Output;
  stderr: Output;
  /** Absent (tests, embedding): never asked anything. */
  stdin?: Input;
  env: Record<string, string | undefined>;
  cwd: string;
}
export declare function processIo(): CliIo;
export declare function writeTable(output: Output, table: readonly (readonly string[])[]): void;
