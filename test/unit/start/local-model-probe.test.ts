import { afterAll, describe, expect, it } from "vitest";
import { closedLoopbackOrigin, listenOnLoopback, type LoopbackServer } from "../../fixtures/loopback-http";
import { findLocalModelServer, pickModel, probeTargets } from "../../../scripts/local-model-probe.mjs";

const servers: LoopbackServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((server) => server.stop()));
});

/** A loopback server answering `GET /v1/models` with these ids (or with `body` as is). */
async function modelServer(ids: string[], body?: string): Promise<number> {
  const server = await listenOnLoopback(async (req, res) => {
    if (req.url !== "/v1/models") return void res.writeHead(404).end();
    res.writeHead(200, { "content-type": "application/json" }).end(body ?? JSON.stringify({ object: "list", data: ids.map((id) => ({ id })) }));
  });
  servers.push(server);
  return Number(new URL(server.origin).port);
}

const named = (port: number) => ({ port, name: `server ${port}` });

describe("npm start's local model probe", () => {
  it("probes the four known servers' ports, never npm start's own; SLIPSNISSE_DEMO_PROBE_PORTS replaces them", () => {
    expect(probeTargets({}, 8787)).toEqual([
      { port: 11434, name: "Ollama" },
      { port: 1234, name: "LM Studio" },
      { port: 8080, name: "llama.cpp" },
      { port: 8000, name: "vLLM" },
    ]);
    expect(probeTargets({}, 8080).map((target) => target.port)).toEqual([11434, 1234, 8000]);
    expect(probeTargets({ SLIPSNISSE_DEMO_PROBE_PORTS: "" }, 8787)).toEqual([]);
    expect(probeTargets({ SLIPSNISSE_DEMO_PROBE_PORTS: "1234, 40000,x" }, 8787)).toEqual([
      { port: 1234, name: "LM Studio" },
      { port: 40000, name: "a server" },
    ]);
  });

  it("prefers a family that calls tools, skips embedding models, and falls back to the first listed", () => {
    expect(pickModel(["gemma2:2b", "llama3:8b", "llama3.1:8b", "qwen2.5:7b"])).toBe("qwen2.5:7b");
    expect(pickModel(["Meta-Llama-3.1-8B-Instruct", "mistral-nemo:12b"])).toBe("Meta-Llama-3.1-8B-Instruct");
    expect(pickModel(["gemma2:2b", "phi3:mini"])).toBe("gemma2:2b");
    expect(pickModel([])).toBeUndefined();
  });

  it("gets past a silent server, a closed port and a server that is not OpenAI-compatible, and takes the first with a chat model", async () => {
    // Accepts the connection and never answers: the probe's own timeout must end the wait.
    const silent = await listenOnLoopback(() => new Promise(() => {}));
    servers.push(silent);
    const closed = Number(new URL(await closedLoopbackOrigin()).port);
    const html = await modelServer([], "<html>not an API</html>");
    const embeddingsOnly = await modelServer(["nomic-embed-text:latest"]);
    const ollama = await modelServer(["nomic-embed-text:latest", "gemma2:2b", "qwen3:8b"]);
    const later = await modelServer(["llama3.1:8b"]);
    const targets = [Number(new URL(silent.origin).port), closed, html, embeddingsOnly, ollama, later].map(named);
    const { found, empty } = await findLocalModelServer(targets, undefined);
    expect(found).toEqual({ ...named(ollama), baseUrl: `http://127.0.0.1:${ollama}/v1`, model: "qwen3:8b", toolCapable: true });
    expect(empty).toEqual([named(embeddingsOnly)]);
  });

  it("takes SLIPSNISSE_DEMO_MODEL as the model, and says when the one it picked is no known tool caller", async () => {
    const port = await modelServer(["gemma2:2b", "qwen2.5:7b"]);
    expect((await findLocalModelServer([named(port)], "my-model")).found).toMatchObject({ model: "my-model", toolCapable: false });
    const unknown = await modelServer(["gemma2:2b"]);
    expect((await findLocalModelServer([named(unknown)], undefined)).found).toMatchObject({ model: "gemma2:2b", toolCapable: false });
    expect(await findLocalModelServer([], undefined)).toEqual({ empty: [] });
  });
});
