#!/usr/bin/env node
// The `slipsnisse` command (package.json "bin"): plain Node ESM, no build step, Node >= 20.
import { main } from "../src/cli/main.mjs";
import { processIo } from "../src/cli/io.mjs";

process.exitCode = await main(process.argv.slice(2), processIo());
