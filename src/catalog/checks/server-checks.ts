import { SERVER_ID_PATTERN } from "../catalog-schema";
import type { PathSegment } from "../catalog-problems";
import { checkServerAuth } from "./auth-checks";
import { checkEndpointUrl } from "./endpoint-url-check";
import type { FindingSink } from "./finding-sink";
import { checkHeaders } from "./header-checks";
import { suggestServerId } from "./name-suggestions";
import { arrayItems, isRawObject, objectEntries, stringAt, type RawObject } from "./raw-json";

const STDIO_KEYS = ["command", "args", "env", "cwd", "transport"] as const;

export function checkServers(servers: unknown, at: readonly PathSegment[], sink: FindingSink): void {
  for (const [id, server] of objectEntries(servers)) {
    const serverPath = [...at, id];
    checkServerId(id, serverPath, sink);
    if (!isRawObject(server)) continue;
    if (isStdio(server)) {
      reportStdio(id, server, serverPath, sink);
    } else if (server.url === undefined && server.binding === undefined) {
      sink.add(
        serverPath,
        `server \`${id}\` has neither \`url\` nor \`binding\`, so there is nothing to connect to`,
        "set `url` to the server's https MCP endpoint (Streamable HTTP or legacy SSE), or `binding` to a service binding of a Worker that serves MCP",
      );
    }
    // A service binding's url only supplies the path; nothing is fetched from its host.
    if (server.binding === undefined) checkEndpointUrl(server.url, "server", [...serverPath, "url"], sink);
    checkHeaders(id, server.headers, [...serverPath, "headers"], sink);
    checkServerAuth(id, server, serverPath, sink);
  }
}

function checkServerId(id: string, serverPath: PathSegment[], sink: FindingSink): void {
  const suggestion = suggestServerId(id);
  if (id.includes("__")) {
    sink.add(
      serverPath,
      `server id \`${id}\` contains \`__\`, the separator of namespaced tool names (\`server__tool\`)`,
      `rename it to \`${suggestion}\` (and use that id in every expert's internal_tools)`,
    );
  } else if (!SERVER_ID_PATTERN.test(id)) {
    sink.add(
      serverPath,
      `server id \`${id}\` is not allowed: use 1-32 of lowercase a-z, 0-9, \`-\` and single \`_\`, starting with a letter or digit`,
      `rename it to \`${suggestion}\` (and use that id in every expert's internal_tools)`,
    );
  }
}

function isStdio(server: RawObject): boolean {
  return server.command !== undefined || server.transport === "stdio";
}

/** Workers have no child processes; the only way to reach a stdio server is over the network. */
function reportStdio(id: string, server: RawObject, serverPath: PathSegment[], sink: FindingSink): void {
  const command = stringAt(server, "command");
  const args = arrayItems(server.args).filter((arg): arg is string => typeof arg === "string");
  const commandLine = command ? [command, ...args].join(" ") : "<command>";
  const reportAt = command !== undefined ? "command" : "transport";
  sink.add(
    [...serverPath, reportAt],
    `server \`${id}\` is a stdio server: Cloudflare Workers cannot spawn processes, so it cannot run here`,
    `run it behind a stdio→Streamable-HTTP bridge, e.g. \`npx -y supergateway --stdio "${commandLine}" --outputTransport streamableHttp\` (or \`mcp-proxy\`), ` +
      'expose that over https, then set `url` to it in place of `command`/`args`/`env`/`transport` (`"url": "https://<your-host>/mcp"`); ' +
      "environment values the process needs stay on the bridge host, and credentials go in headers as `${SECRET_NAME}` references",
    STDIO_KEYS.filter((key) => key !== reportAt && server[key] !== undefined).map((key) => [...serverPath, key]),
  );
}
