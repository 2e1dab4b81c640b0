import { z } from "zod";

/**
 * The catalog: the single source of truth for what a tenant serves. One tenant holds several
 * skills; each skill is its own MCP endpoint with its own downstream servers, tool policy and
 * experts. `catalog-problems.ts` turns zod issues into messages that name the JSON path and
 * the fix; keep the `.describe()` texts short, they also become the editor JSON Schema.
 */

/** MCP tool names: 1-64 of [A-Za-z0-9_.-] (2025-11-25 "Tool names" guidance; clients reject others). */
export const TOOL_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;
/** Server ids become the `server__tool` namespace prefix, so they may not contain `__`. */
export const SERVER_ID_PATTERN = /^[a-z0-9](?:[a-z0-9-]|_(?!_)){0,31}$/;
export const SKILL_NAME_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;
export const SECRET_NAME_PATTERN = /^[A-Z][A-Z0-9_]*$/;

export const DEFAULT_SKILL = "default";

/**
 * Downstream responses are counted on the stream and cut past this (src/downstream/response-byte-cap.ts):
 * a Worker isolate has 128 MB, and one 60 MB tool result took workerd from 258 to 586 MB resident.
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 4 * 1024 * 1024;
/** The highest cap the catalog may set: well inside an isolate's 128 MB with the session's other runs. */
export const MAX_RESPONSE_BYTES_LIMIT = 32 * 1024 * 1024;

const headerValue = z.string().describe("Header value; `${SECRET_NAME}` is replaced by the Worker secret of that name at connect time.");

/**
 * Sign-in to the server through its own OAuth (docs: docs/catalog.md#connections): Slipsnisse is the
 * OAuth client and holds a token per member (`user`) or one for the team (`team`), encrypted
 * in the UserConnections Durable Object. The client registers itself (dynamic client
 * registration) unless the admin gives a pre-registered client id (and secret) as Worker
 * secret names.
 */
export const serverAuthSchema = z
  .object({
    type: z.literal("oauth").describe("`oauth`: each call carries a token from the server's own OAuth 2.1 sign-in."),
    connection: z
      .enum(["user", "team"])
      .default("user")
      .describe("`user`: each member connects their own account. `team`: an admin connects once and every member acts as that account."),
    scopes: z
      .array(z.string().regex(/^[\x21\x23-\x5B\x5D-\x7E]{1,200}$/))
      .max(50)
      .optional()
      .describe("Scopes to ask for; default: what the server's metadata advertises."),
    client_id_secret: z
      .string()
      .regex(SECRET_NAME_PATTERN)
      .optional()
      .describe("Worker secret holding a client id registered at the server (GitHub-style OAuth apps); without it Slipsnisse registers itself."),
    client_secret_secret: z.string().regex(SECRET_NAME_PATTERN).optional().describe("Worker secret holding that client's secret, if it has one."),
    issuer: z
      .url({ protocol: /^https?$/ })
      .optional()
      .describe(
        "The authorization server (its issuer URL) that client id was registered at: its id and secret go to no other. Default: the first issuer it is used with, then fixed.",
      ),
    token_endpoint: z
      .url({ protocol: /^https?$/ })
      .optional()
      .describe("A token endpoint outside the issuer's origin that the client may still send its secret to; any other such endpoint is refused."),
    grant: z
      .enum(["authorization_code", "client_credentials"])
      .optional()
      .describe(
        "`authorization_code` (the default): someone signs in in a browser. `client_credentials` (team connections with a client id and secret only): Slipsnisse fetches the team's token itself, no sign-in.",
      ),
  })
  .strict();
export type ServerAuth = z.output<typeof serverAuthSchema>;

export const downstreamServerSchema = z
  .object({
    url: z
      .url({ protocol: /^https?$/ })
      .optional()
      .describe("Remote MCP endpoint (Streamable HTTP or legacy SSE)."),
    binding: z
      .string()
      .regex(/^[A-Z][A-Z0-9_]*$/)
      .optional()
      .describe("A service binding to another Worker that serves MCP; `url` then only supplies the path."),
    transport: z.enum(["streamable-http", "sse", "auto"]).default("auto"),
    headers: z.record(z.string(), headerValue).default({}),
    connect_timeout_ms: z.number().int().min(100).max(60_000).default(10_000),
    call_timeout_ms: z.number().int().min(100).max(600_000).default(60_000),
    tool_list_ttl_ms: z.number().int().min(0).max(86_400_000).default(300_000),
    max_response_bytes: z
      .number()
      .int()
      .min(1_024)
      .max(MAX_RESPONSE_BYTES_LIMIT)
      .default(DEFAULT_MAX_RESPONSE_BYTES)
      .describe("Largest response the server may send (a JSON body, or one SSE event), in bytes; past it the call fails and the rest is not read."),
    auto_approve_new_tools: z
      .boolean()
      .default(false)
      .describe("Offer tools the server adds after its first listing at once; by default they wait for an admin's review like changed ones."),
    description: z.string().max(500).optional(),
    auth: serverAuthSchema.optional(),
  })
  .strict();

export const budgetSchema = z
  .object({
    max_steps: z.number().int().min(1).max(50).default(8),
    timeout_ms: z.number().int().min(1_000).max(600_000).default(60_000),
    max_output_tokens: z.number().int().min(16).max(200_000).default(2_048),
    max_tool_calls: z.number().int().min(0).max(200).default(16),
    max_tool_result_bytes: z.number().int().min(256).max(1_000_000).default(16_384),
    max_input_bytes: z
      .number()
      .int()
      .min(256)
      .max(1_000_000)
      .default(32_768)
      .describe("Largest tool arguments (as JSON, in bytes) the expert accepts; larger calls are refused before the model runs."),
  })
  .strict();

export const historySchema = z
  .object({
    max_tokens: z
      .number()
      .int()
      .min(100)
      .max(1_000_000)
      .default(30_000)
      .describe("Thread history kept, in approximate tokens (4 characters each); oldest turns go first."),
    max_messages: z.number().int().min(2).max(1_000).default(50).describe("Thread history kept, in messages (user, assistant and tool turns)."),
  })
  .strict();

/**
 * An eval's checks on one run, in the spirit of promptfoo's assertions. Tool globs are over
 * `server__tool` names like the tool policy's; `max_cost` is in the currency of the skill's `pricing`.
 */
export const evalAssertionSchema = z.discriminatedUnion("type", [
  z
    .object({
      type: z.literal("contains"),
      value: z.string().min(1).max(2_000),
      case_sensitive: z.boolean().default(false),
    })
    .strict()
    .describe("The answer contains `value`."),
  z
    .object({
      type: z.literal("matches"),
      pattern: z.string().min(1).max(2_000).describe("A JavaScript regular expression."),
      flags: z
        .string()
        .regex(/^[imsu]*$/)
        .default("")
        .describe("Regular expression flags, of `i`, `m`, `s`, `u`."),
    })
    .strict()
    .describe("The answer matches `pattern`."),
  z
    .object({ type: z.literal("json_schema"), schema: z.record(z.string(), z.unknown()).describe("A JSON Schema the answer must validate against.") })
    .strict()
    .describe("The structured answer (or the answer parsed as JSON) validates against `schema`."),
  z
    .object({ type: z.literal("calls_tool"), tool: z.string().min(1).max(200) })
    .strict()
    .describe("The run called a tool matching the glob `tool`."),
  z
    .object({ type: z.literal("not_calls_tool"), tool: z.string().min(1).max(200) })
    .strict()
    .describe("The run never tried a tool matching the glob `tool`."),
  z
    .object({ type: z.literal("max_steps"), value: z.number().int().min(1).max(50) })
    .strict()
    .describe("The run took at most `value` model steps."),
  z
    .object({ type: z.literal("max_tokens"), value: z.number().int().min(1).max(10_000_000) })
    .strict()
    .describe("The run used at most `value` input plus output tokens."),
  z
    .object({ type: z.literal("max_cost"), value: z.number().min(0).max(1_000) })
    .strict()
    .describe("The run cost at most `value` at the skill's `pricing` (fails for an unpriced model)."),
  z
    .object({
      type: z.literal("rubric"),
      criteria: z.string().min(1).max(2_000).describe("What a good answer does, in words the judge model grades against."),
      threshold: z.number().min(0).max(1).default(0.7).describe("Lowest score (0 to 1) the judge may give for the eval to pass."),
    })
    .strict()
    .describe("The judge model named in `eval_settings.judge` scores the answer against `criteria`."),
]);

export const expertEvalSchema = z
  .object({
    name: z.string().regex(TOOL_NAME_PATTERN).describe("Names the eval in results; unique within the expert."),
    arguments: z.record(z.string(), z.unknown()).describe("The expert's arguments for this eval, as an orchestrator would send them."),
    assert: z.array(evalAssertionSchema).min(1).max(20),
    approve: z.boolean().default(false).describe("How a call needing approval is answered during this eval: declined (default), or approved with true."),
  })
  .strict();

export const evalSettingsSchema = z
  .object({
    max_cost: z
      .number()
      .min(0)
      .max(1_000)
      .default(1)
      .describe("Most one eval command may spend on this expert (at the skill's `pricing`); runs stop when it is reached."),
    concurrency: z.number().int().min(1).max(8).default(2).describe("Evals of this expert run at once."),
    judge: z
      .object({
        provider: z.enum(["workers-ai", "google", "openai-compatible"]),
        model: z.string().min(1),
        base_url: z.url({ protocol: /^https?$/ }).optional(),
        api_key_secret: z.string().regex(SECRET_NAME_PATTERN).optional(),
      })
      .strict()
      .optional()
      .describe("The model that grades `rubric` assertions (its tokens count toward the eval's cost)."),
    gate: z
      .boolean()
      .default(false)
      .describe("Refuse a catalog write that changes this expert (or the skill's servers, tool policy or pricing) unless its evals pass."),
  })
  .strict();

export const expertSchema = z
  .object({
    name: z.string().regex(TOOL_NAME_PATTERN),
    title: z.string().min(1).max(200).optional().describe("Display name for clients; derived from `name` when absent."),
    description: z.string().min(1).max(2_000),
    arguments: z
      .record(z.string(), z.unknown())
      .default({ type: "object", properties: { query: { type: "string" } }, required: ["query"] })
      .describe("JSON Schema of the tool's arguments (an object schema)."),
    internal_tools: z.record(z.string(), z.array(z.string().min(1)).min(1)).default({}),
    provider: z.enum(["workers-ai", "google", "openai-compatible"]).default("workers-ai"),
    model: z.string().min(1).optional(),
    /** For openai-compatible: the endpoint, e.g. http://127.0.0.1:11434/v1 for Ollama. */
    base_url: z.url({ protocol: /^https?$/ }).optional(),
    /** For openai-compatible: the Worker secret holding the API key, if the endpoint needs one. */
    api_key_secret: z.string().regex(SECRET_NAME_PATTERN).optional(),
    system_prompt: z.string().max(20_000).optional(),
    mode: z
      .enum(["synthesize", "route", "code"])
      .default("synthesize")
      .describe(
        "`synthesize`: a tool loop, then the model writes the answer. `route`: the model picks one whitelisted tool call and its result is returned as is. `code`: the model writes a script over the whitelisted tools, run in a sandbox (a Dynamic Worker; the Worker needs a `worker_loaders` binding named LOADER), and answers from its result.",
      ),
    output_schema: z
      .record(z.string(), z.unknown())
      .optional()
      .describe("JSON Schema (an object schema) of a structured answer; the tool then returns structuredContent. Not with `mode: route`."),
    budget: budgetSchema.default(budgetSchema.parse({})),
    history: historySchema.default(historySchema.parse({})).describe("How much of a thread (follow-up conversation) the expert keeps."),
    ask_back: z
      .boolean()
      .default(false)
      .describe(
        "Give the model an `ask_orchestrator(question)` tool: the run pauses, the question is the answer, and a call with the thread and `answer` resumes it.",
      ),
    ask_back_ttl_ms: z.number().int().min(1_000).max(86_400_000).default(900_000).describe("How long a paused run waits for its answer."),
    user_input_timeout_ms: z
      .number()
      .int()
      .min(1_000)
      .max(600_000)
      .default(120_000)
      .describe(
        "How long an approval or an `ask_user` question shown to the user mid-call (MCP elicitation) waits before it counts as unanswered; the wait counts toward `budget.timeout_ms`.",
      ),
    task: z
      .enum(["optional", "required", "forbidden"])
      .default("forbidden")
      .describe(
        "MCP Tasks (2025-11-25 clients over Streamable HTTP): `optional` lets a client run a call as a task it polls; `required` refuses such clients a plain call. Clients without Tasks always call as usual.",
      ),
    evals: z
      .array(expertEvalSchema)
      .max(100)
      .optional()
      .describe("Test questions with what a good run shows; `npx slipsnisse eval` runs them through the real runner, per model."),
    eval_settings: evalSettingsSchema.optional().describe("Bounds of one eval command on this expert: total cost and concurrency."),
  })
  .strict();

/** Daily windows are UTC days; `runs_in_flight` counts runs started and not yet ended. */
export const usageLimitsSchema = z
  .object({
    runs_per_day: z.number().int().min(0).max(10_000_000).optional(),
    tokens_per_day: z.number().int().min(0).max(10_000_000_000).optional().describe("Input plus output tokens of the model."),
    cost_per_day_usd: z
      .number()
      .min(0)
      .max(1_000_000)
      .optional()
      .describe("Counts only runs whose model has a price in the skill's `pricing`; unpriced runs add no cost."),
    runs_in_flight: z.number().int().min(0).max(10_000).optional(),
  })
  .strict();

export const skillLimitsSchema = z
  .object({
    per_user: usageLimitsSchema.optional().describe("Each signed-in user's own counters in this skill."),
    per_skill: usageLimitsSchema.optional().describe("All users of this skill together."),
  })
  .strict();

export const skillAccessSchema = z
  .object({
    users: z.array(z.string().min(1)).default([]).describe("Logins, emails or user ids (`github-123`) allowed to use this skill."),
    groups: z
      .array(z.string().min(1))
      .default([])
      .describe(
        "Groups allowed to use this skill: OIDC groups claim values (OIDC_GROUPS_CLAIM), or GitHub teams as org/team-slug (GitHub sign-in with GITHUB_ORG).",
      ),
  })
  .strict();

export type UsageLimits = z.output<typeof usageLimitsSchema>;
export type SkillLimits = z.output<typeof skillLimitsSchema>;
export type SkillAccess = z.output<typeof skillAccessSchema>;

export const DEFAULT_RETENTION_DAYS = 30;

export const toolPolicySchema = z
  .object({
    allowed: z.array(z.string()).default(["*"]).describe("Glob patterns over `server__tool` names."),
    blocked: z.array(z.string()).default([]).describe("Glob patterns; blocked always wins."),
    requires_approval: z
      .array(z.string().min(1))
      .default([])
      .describe("Glob patterns over `server__tool` names: a call to a matching tool runs only after the user (or the orchestrator) approves it."),
    approve_destructive: z
      .boolean()
      .default(true)
      .describe("A downstream tool annotated `destructiveHint: true` needs approval too; set false to opt out (requires_approval still applies)."),
  })
  .strict();

export const modelPriceSchema = z
  .object({
    input_per_million: z.number().min(0).max(10_000).describe("Price of one million input tokens (in your billing currency)."),
    output_per_million: z.number().min(0).max(10_000).describe("Price of one million output tokens."),
  })
  .strict();

export const pricingSchema = z
  .partialRecord(expertSchema.shape.provider.unwrap(), z.record(z.string().min(1), modelPriceSchema))
  .describe(
    'Prices per provider and model id, e.g. {"google": {"gemini-2.5-flash": {"input_per_million": 0.3, "output_per_million": 2.5}}}. Usage reports cost only for priced models.',
  );

export const skillSchema = z
  .object({
    description: z.string().max(2_000).optional(),
    limits: skillLimitsSchema
      .optional()
      .describe("Runs, tokens and cost per day and runs in flight, per user and for the whole skill; checked before the model is called."),
    retention_days: z.number().int().min(1).max(3_650).default(DEFAULT_RETENTION_DAYS).describe("Runs and threads older than this many days are deleted."),
    access: skillAccessSchema.optional().describe("Who may use this skill; without it every member may. Admins always may."),
    servers: z.record(z.string(), downstreamServerSchema).default({}),
    tool_policy: toolPolicySchema.default(toolPolicySchema.parse({})),
    experts: z.array(expertSchema).default([]),
    pricing: pricingSchema.optional(),
  })
  .strict();

export const catalogSchema = z
  .object({
    $schema: z.string().optional(),
    skills: z.record(z.string(), skillSchema),
  })
  .strict();

export type DownstreamServerConfig = z.output<typeof downstreamServerSchema>;
export type Budget = z.output<typeof budgetSchema>;
export type ExpertConfig = z.output<typeof expertSchema>;
export type ToolPolicy = z.output<typeof toolPolicySchema>;
export type SkillConfig = z.output<typeof skillSchema>;
export type Catalog = z.output<typeof catalogSchema>;
export type CatalogInput = z.input<typeof catalogSchema>;
export type ProviderName = ExpertConfig["provider"];
export type ModelPrice = z.output<typeof modelPriceSchema>;
export type ExpertEval = z.output<typeof expertEvalSchema>;
export type EvalAssertion = z.output<typeof evalAssertionSchema>;
export type EvalSettings = z.output<typeof evalSettingsSchema>;
