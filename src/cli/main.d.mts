import type { CliIo } from "./io.mjs";
export declare function main(argv: string[], io: CliIo): Promise<number>;
