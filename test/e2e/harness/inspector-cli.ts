import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { spawnBounded } from "./spawn-bounded";

/** The bin behind `npx @modelcontextprotocol/inspector`, run under this Node (it needs >= 22.19). */
const inspectorBin = fileURLToPath(new URL("../../../node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js", import.meta.url));

export interface InspectorCliOptions {
  timeoutMs?: number;
  /** `--header "Name: value"` pairs. */
  headers?: Record<string, string>;
  /** Extra environment, over the defaults below (e.g. a HOME shared by two runs, BROWSER). */
  env?: Record<string, string>;
}

/**
 * Runs the MCP Inspector CLI (`inspector --cli <args>`) to completion and returns its stdout
 * parsed as JSON. HOME (the Inspector's storage: OAuth clients and tokens) and MCP_CATALOG_PATH
 * point into a throwaway directory so nothing is written to the real home.
 */
export async function runInspectorCli(args: readonly string[], options: InspectorCliOptions = {}): Promise<unknown> {
  const dir = await mkdtemp(join(tmpdir(), "slipsnisse-inspector-"));
  const headerArgs = Object.entries(options.headers ?? {}).flatMap(([name, value]) => ["--header", `${name}: ${value}`]);
  const timeoutMs = options.timeoutMs ?? 30_000;
  try {
    const { code, stdout, stderr } = await spawnBounded(process.execPath, [inspectorBin, "--cli", ...args, ...headerArgs], {
      env: { ...process.env, HOME: dir, MCP_CATALOG_PATH: join(dir, "mcp.json"), NO_COLOR: "1", ...options.env },
      timeoutMs,
      label: `inspector --cli ${args.join(" ")}`,
    });
    if (code !== 0) throw new Error(`inspector --cli ${args.join(" ")} exited ${code}:\n${stderr.slice(-2000)}${stdout.slice(-1000)}`);
    try {
      return JSON.parse(stdout) as unknown;
    } catch {
      throw new Error(`inspector --cli printed no JSON:\n${stdout.slice(0, 2000)}`);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** For the method wrappers: which of the Inspector's remote transports to speak (default `http`). */
export interface InspectorMethodOptions extends InspectorCliOptions {
  transport?: "http" | "sse";
  /** More Inspector flags, e.g. `["--callback-url", …]` or `["--stored-auth-only"]`. */
  args?: readonly string[];
}

const toolsListSchema = z.looseObject({ tools: z.array(z.looseObject({ name: z.string() })) });

/** `inspector --cli <url> --transport http|sse --method tools/list`, the tool names it saw. */
export async function inspectorListToolNames(url: string, options: InspectorMethodOptions = {}): Promise<string[]> {
  const listed = await runInspectorCli([url, "--transport", options.transport ?? "http", "--method", "tools/list", ...(options.args ?? [])], options);
  const parsed = toolsListSchema.safeParse(listed);
  if (!parsed.success) throw new Error(`inspector tools/list gave no tools array: ${JSON.stringify(listed).slice(0, 500)}`);
  return parsed.data.tools.map((tool) => tool.name);
}

const toolCallSchema = z.looseObject({
  content: z.array(z.looseObject({ type: z.string(), text: z.string().optional() })),
  isError: z.boolean().optional(),
});

/** `inspector --cli <url> --method tools/call --tool-name <name> --tool-args-json <args>`, the result it printed. */
export async function inspectorCallTool(
  url: string,
  name: string,
  args: Record<string, unknown>,
  options: InspectorMethodOptions = {},
): Promise<z.infer<typeof toolCallSchema>> {
  const called = await runInspectorCli(
    [
      url,
      "--transport",
      options.transport ?? "http",
      "--method",
      "tools/call",
      "--tool-name",
      name,
      "--tool-args-json",
      JSON.stringify(args),
      ...(options.args ?? []),
    ],
    options,
  );
  const parsed = toolCallSchema.safeParse(called);
  if (!parsed.success) throw new Error(`inspector tools/call gave no tool result: ${JSON.stringify(called).slice(0, 500)}`);
  return parsed.data;
}
