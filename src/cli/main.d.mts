import type { CliIo } from "./io.mjs";
export declare const COMMANDS: Record<string, (args: string[], flags: Record<string, unknown>, io: CliIo) => Promise<number>>;
export declare function main(argv: string[], io: CliIo): Promise<number>;
