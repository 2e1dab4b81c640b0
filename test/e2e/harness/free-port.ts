import { createServer, type Server } from "node:net";

/** A TCP port on 127.0.0.1 that was free a moment ago (the OS picks it; a tiny race remains). */
export async function freePort(): Promise<number> {
  const [port] = await freePorts(1);
  if (port === undefined) throw new Error("freePort: the OS gave no TCP port");
  return port;
}

/**
 * `count` distinct free ports. Each is held until all are bound: two `freePort()` calls in a row
 * can be handed the same port, since the first is released before the second is asked for (an
 * SDK example server was once given one port for both its listeners and failed to start).
 */
async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    const ports: number[] = [];
    for (let i = 0; i < count; i++) {
      const server = createServer();
      server.unref();
      servers.push(server);
      ports.push(await listenOnAnyPort(server));
    }
    return ports;
  } finally {
    await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  }
}

function listenOnAnyPort(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      if (address === null || typeof address === "string") reject(new Error("freePorts: the OS gave no TCP address"));
      else resolve(address.port);
    });
  });
}

/** Two distinct free ports (a server and its second listener). */
export async function twoFreePorts(): Promise<[number, number]> {
  const [first, second] = await freePorts(2);
  if (first === undefined || second === undefined) throw new Error("freePorts: the OS gave fewer ports than asked");
  return [first, second];
}
