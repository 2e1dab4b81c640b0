import { TOOL_NAME_PATTERN } from "../catalog-schema";
import type { PathSegment } from "../catalog-problems";
import { checkArgumentsSchema, checkObjectSchema } from "./arguments-schema-check";
import { checkEndpointUrl } from "./endpoint-url-check";
import { checkEvals } from "./eval-checks";
import type { FindingSink } from "./finding-sink";
import { suggestToolName } from "./name-suggestions";
import { arrayItems, isRawObject, objectEntries, stringAt, type RawObject } from "./raw-json";

export function checkExperts(experts: unknown, serverIds: readonly string[], at: readonly PathSegment[], sink: FindingSink): void {
  const firstIndexByName = new Map<string, number>();
  arrayItems(experts).forEach((expert, index) => {
    if (!isRawObject(expert)) return;
    const expertPath = [...at, index];
    const name = stringAt(expert, "name");
    if (name !== undefined) checkName(name, index, firstIndexByName, expertPath, sink);
    checkInternalTools(expert.internal_tools, serverIds, [...expertPath, "internal_tools"], sink);
    if (expert.arguments !== undefined) checkArgumentsSchema(expert.arguments, [...expertPath, "arguments"], sink);
    if (expert.output_schema !== undefined) checkObjectSchema("output_schema", expert.output_schema, [...expertPath, "output_schema"], sink);
    checkRouteOutput(expert, expertPath, sink);
    checkAskBack(expert, expertPath, sink);
    checkCodeMode(expert, expertPath, sink);
    checkProvider(expert, expertPath, sink);
    checkEvals(expert, expertPath, sink);
  });
}

function checkName(name: string, index: number, seen: Map<string, number>, expertPath: PathSegment[], sink: FindingSink): void {
  const namePath = [...expertPath, "name"];
  if (!TOOL_NAME_PATTERN.test(name)) {
    sink.add(
      namePath,
      `expert name \`${name.slice(0, 80)}\` would be rejected by MCP clients: tool names are 1-64 of letters, digits, \`_\`, \`.\` and \`-\``,
      `rename it to \`${suggestToolName(name)}\``,
    );
  }
  const first = seen.get(name);
  if (first === undefined) {
    seen.set(name, index);
    return;
  }
  sink.add(
    namePath,
    `expert name \`${name.slice(0, 80)}\` is already used by expert [${first}] of this skill; tool names must be unique within a skill`,
    `rename one of them, e.g. to \`${suggestToolName(`${name}_${index + 1}`)}\``,
  );
}

function checkInternalTools(internalTools: unknown, serverIds: readonly string[], at: PathSegment[], sink: FindingSink): void {
  for (const [serverId, tools] of objectEntries(internalTools)) {
    if (!serverIds.includes(serverId)) {
      sink.add(
        [...at, serverId],
        `internal_tools names server \`${serverId}\`, which this skill does not define`,
        serverIds.length > 0
          ? `use one of the servers this skill defines: ${serverIds.map((id) => `\`${id}\``).join(", ")}; or add \`${serverId}\` to the skill's servers`
          : `add a server \`${serverId}\` to the skill's servers (this skill defines none yet)`,
      );
    }
    arrayItems(tools).forEach((tool, index) => {
      if (typeof tool !== "string" || !tool.includes("__")) return;
      const prefix = `${serverId}__`;
      sink.add(
        [...at, serverId, index],
        `internal tool name \`${tool}\` contains \`__\`, which is reserved as the \`server__tool\` separator`,
        tool.startsWith(prefix)
          ? `write \`${tool.slice(prefix.length)}\`: the server prefix is added automatically`
          : "use the downstream tool's own name as that server lists it, without any `server__` prefix",
      );
    });
  }
}

function checkProvider(expert: RawObject, expertPath: PathSegment[], sink: FindingSink): void {
  const provider = expert.provider ?? "workers-ai";
  const hasBaseUrl = expert.base_url !== undefined;
  if (provider === "openai-compatible" && !hasBaseUrl) {
    sink.add(
      [...expertPath, "base_url"],
      "provider `openai-compatible` needs `base_url`, the endpoint to send requests to",
      'set `base_url`, e.g. "http://127.0.0.1:11434/v1" for Ollama or "https://openrouter.ai/api/v1", and `api_key_secret` if it needs a key',
    );
  } else if (provider === "openai-compatible") {
    checkEndpointUrl(expert.base_url, "model", [...expertPath, "base_url"], sink);
  } else if ((provider === "google" || provider === "workers-ai") && hasBaseUrl) {
    sink.add(
      [...expertPath, "base_url"],
      `\`base_url\` has no meaning for provider \`${provider}\`, whose endpoint is fixed`,
      "remove `base_url`, or set `provider` to `openai-compatible` if you meant a custom endpoint",
    );
  }
}

/** A route expert returns the chosen downstream result as is, so there is no answer to shape. */
function checkRouteOutput(expert: RawObject, expertPath: PathSegment[], sink: FindingSink): void {
  if (expert.mode !== "route" || expert.output_schema === undefined) return;
  sink.add(
    [...expertPath, "output_schema"],
    '`output_schema` cannot be used with `mode: "route"`: a route expert returns the downstream tool\'s result as is, not an answer it writes',
    'remove `output_schema`, or set `mode` to `"synthesize"` to have the model write a structured answer from the tool results',
  );
}

/**
 * A paused run answers with a question, not a result: a route expert makes no second model call
 * to ask from, and a structured expert's result must match its output_schema.
 */
function checkAskBack(expert: RawObject, expertPath: PathSegment[], sink: FindingSink): void {
  if (expert.ask_back !== true) return;
  if (expert.mode === "route") {
    sink.add(
      [...expertPath, "ask_back"],
      '`ask_back` cannot be used with `mode: "route"`: a route expert makes one model call and never converses',
      'remove `ask_back`, or set `mode` to `"synthesize"`',
    );
  }
  if (expert.output_schema !== undefined) {
    sink.add(
      [...expertPath, "ask_back"],
      "`ask_back` cannot be used with `output_schema`: a question is not an answer matching the schema",
      "remove `ask_back` or `output_schema`",
    );
  }
}

/**
 * A code-mode run answers from a script's result in a sandbox that cannot pause mid-script, so
 * it neither asks back nor shapes a structured answer (yet).
 */
function checkCodeMode(expert: RawObject, expertPath: PathSegment[], sink: FindingSink): void {
  if (expert.mode !== "code") return;
  for (const field of ["ask_back", "output_schema"] as const) {
    if (expert[field] === undefined || expert[field] === false) continue;
    sink.add(
      [...expertPath, field],
      `\`${field}\` cannot be used with \`mode: "code"\`: a code-mode expert answers in text from its scripts' results`,
      `remove \`${field}\`, or set \`mode\` to \`"synthesize"\``,
    );
  }
}
