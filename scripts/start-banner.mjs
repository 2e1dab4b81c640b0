// What `npm start` prints once the server answers: how to connect, what the catalog is, and,
// before anyone calls it, whether the demo expert has a model at all.
import { LOCAL_ADMIN_TOKEN_FILE } from "../src/cli/local-admin-token.mjs";

const INDENT = " ".repeat(17);

/**
 * @param {{
 *   base: string,
 *   catalog: string,
 *   model?: string[],
 *   open: boolean,
 *   devUser: string,
 *   devUsers: string[],
 *   ownToken: boolean,
 *   logFile: string,
 * }} options model: lines about the demo expert's model (none for a catalog of the user's own)
 * @returns {string}
 */
export function banner({ base, catalog, model = [], open, devUser, devUsers, ownToken, logFile }) {
  const logins = [devUser, ...devUsers.filter((login) => login !== devUser)];
  const lines = ["", "Slipsnisse is running.", `  MCP endpoint:  ${base}/mcp`, `  Dashboard:     ${base}/admin`, `  Catalog:       ${catalog}`];
  lines.push(...model.map((line, index) => (index === 0 ? `  Model:         ${line}` : `${INDENT}${line}`)));
  if (open) {
    lines.push(`  Sign-in:       none (--no-auth, loopback only)`);
    lines.push(`  List tools:    npx @modelcontextprotocol/inspector --cli ${base}/mcp --transport http --method tools/list`);
  } else if (logins.length > 1) {
    lines.push(`  Sign-in:       OAuth with the dev identity provider; the consent page offers ${logins.join(", ")} (admin: ${devUser})`);
    lines.push(`  Without OAuth: npm start -- --no-auth`);
  } else {
    lines.push(`  Sign-in:       OAuth with the dev identity provider as "${devUser}" (one click on the consent page)`);
    lines.push(`  Without OAuth: npm start -- --no-auth`);
  }
  lines.push(`  Admin CLI:     npx slipsnisse push catalog.json --url ${base}`);
  lines.push(
    `${INDENT}(also pull, diff, versions, whoami; the ${ownToken ? "ADMIN_TOKEN from .dev.vars" : "admin token of this run"} is read from ${LOCAL_ADMIN_TOKEN_FILE})`,
  );
  lines.push(`  Log:           ${logFile} (migrations and wrangler dev's output; wrangler's output follows below)`);
  // The last line: the test harness and anyone scripting npm start wait for it.
  lines.push(`  Claude Code:   claude mcp add --transport http slipsnisse ${base}/mcp`, "");
  return `${lines.join("\n")}\n`;
}

/**
 * The Model lines for the demo expert: what it uses and where that came from, or, when it has
 * none that can run here, that its calls will fail and the three ways to give it one.
 * @param {{
 *   provider: string,
 *   remote: boolean,
 *   found?: { name: string, port: number, model: string, toolCapable: boolean },
 *   empty: Array<{ name: string, port: number }>,
 *   probed: Array<{ name: string, port: number }>,
 * }} options
 * @returns {string[]}
 */
export function demoModelLines({ provider, remote, found, empty, probed }) {
  if (found && provider === "openai-compatible") {
    return [
      `${found.model} on ${found.name} at 127.0.0.1:${found.port}, found by npm start (SLIPSNISSE_DEMO_MODEL picks another)`,
      ...(found.toolCapable ? [] : ["(not a model family known to call tools; if ask_docs fails, pick one that does)"]),
    ];
  }
  if (provider !== "workers-ai" || remote) return [];
  const looked =
    probed.length > 0
      ? `no local model server answered (${probed.map(({ name, port }) => `${name} on ${port}`).join(", ")})`
      : "SLIPSNISSE_DEMO_PROBE_PORTS names no port to look for a local model server on";
  return [
    `NONE. The demo expert "ask_docs" has no model that runs here, so its calls will fail:`,
    `Workers AI does not run under \`wrangler dev --local\`, and ${looked}.`,
    ...empty.map(({ name, port }) => `${name} answers on ${port} but lists no chat model (Ollama: \`ollama pull qwen2.5:7b\`).`),
    `Give it one, then run npm start again:`,
    `  1. a local OpenAI-compatible server with a tool-calling model (Ollama: \`ollama pull qwen2.5:7b\`),`,
    `     found on its usual port, or named by SLIPSNISSE_DEMO_BASE_URL and SLIPSNISSE_DEMO_MODEL`,
    `  2. Gemini: GOOGLE_GENERATIVE_AI_API_KEY=... in .dev.vars`,
    `  3. Workers AI: npx wrangler login, then npm run start:remote`,
  ];
}
