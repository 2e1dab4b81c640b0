import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeOpenAI, textReply, toolCallsReply, toolResultMessages, type FakeOpenAIServer } from "./harness/fake-openai-server";
import { freePort } from "./harness/free-port";
import { connectMcpClient, resultText } from "./harness/mcp-clients";
import { isLiveProcess, killProcessGroup, listProcessGroup } from "./harness/process-group";
import { repoRoot } from "./harness/wrangler-command";

// The last line of the banner start.mjs prints once the demo catalog is loaded.
const READY = /Claude Code: .*\n/;

/**
 * The README's first command, as a user runs it: `npm start` (here with `--no-auth`, since this
 * client does no OAuth, and a local OpenAI-compatible model as the README describes), then the
 * demo expert answers a question by searching the built-in docs server.
 */
describe("npm start", () => {
  let fake: FakeOpenAIServer;
  let start: ChildProcess;
  let port: number;
  let output = "";

  beforeAll(async () => {
    fake = await startFakeOpenAI({
      script: [
        toolCallsReply({ name: "docs__search_docs", arguments: { query: "budget exhausted" } }),
        textReply("Every loop is bounded; running out returns what was gathered."),
      ],
    });
    port = await freePort();
    start = spawn(process.execPath, ["scripts/start.mjs", "--no-auth"], {
      cwd: repoRoot,
      detached: true,
      env: { ...process.env, PORT: String(port), SLIPSNISSE_DEMO_BASE_URL: fake.baseURL, SLIPSNISSE_DEMO_MODEL: "fake" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`npm start was not ready in 60 s:\n${output.slice(-2000)}`)), 60_000);
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (READY.test(output)) {
          clearTimeout(timer);
          resolve();
        }
      };
      start.stdout?.on("data", onData);
      start.stderr?.on("data", onData);
      start.once("exit", (code) => reject(new Error(`npm start exited early (${code}):\n${output.slice(-2000)}`)));
    });
    await ready;
  });

  afterAll(async () => {
    if (start?.pid !== undefined && isLiveProcess(start.pid)) await killProcessGroup(start.pid);
    await fake?.close();
  });

  it("prints how to connect and serves the demo expert", async () => {
    expect(output).toContain(`MCP endpoint:  http://127.0.0.1:${port}/mcp`);
    expect(output).toContain("openai-compatible / fake");
    const client = await connectMcpClient("v2-2025", `http://127.0.0.1:${port}/mcp`);
    try {
      expect((await client.listTools()).map((tool) => tool.name)).toEqual(["ask_docs"]);
      const result = await client.callTool("ask_docs", { query: "What happens when a budget runs out?" });
      expect(resultText(result)).toContain("Every loop is bounded");
      // The model read a real search result from the built-in docs server (this README).
      const toolResults = fake.requests.flatMap((request) => toolResultMessages(request));
      expect(toolResults.map((message) => message.content).join("\n")).toContain("readme#");
    } finally {
      await client.close();
    }
  });

  it("stops wrangler and its workerd processes on Ctrl-C", async () => {
    const pid = start.pid;
    if (pid === undefined) throw new Error("npm start has no pid");
    const exited = new Promise<number | null>((resolve) => start.once("exit", resolve));
    process.kill(pid, "SIGINT");
    await exited;
    // wrangler runs in a process group of its own; the start script must have ended it.
    const deadline = Date.now() + 10_000;
    let leftovers = listProcessGroup(pid).length + countWranglerOn(port);
    while (leftovers > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      leftovers = countWranglerOn(port);
    }
    expect(leftovers).toBe(0);
  });
});

function countWranglerOn(port: number): number {
  const out = execFileSync("ps", ["-eo", "args"], { encoding: "utf8" });
  return out.split("\n").filter((line) => line.includes(`--port ${port}`) || line.includes(`127.0.0.1:${port}`)).length;
}
