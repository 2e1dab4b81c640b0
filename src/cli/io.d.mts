export interface Output {
  write(text: string): unknown;
  isTTY?: boolean;
}
export interface CliIo {
  stdout: Output;
  stderr: Output;
  env: Record<string, string | undefined>;
  cwd: string;
}
export declare function processIo(): CliIo;
