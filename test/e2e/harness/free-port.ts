import { createServer } from "node:net";

/** A TCP port on 127.0.0.1 that was free a moment ago (the OS picks it; a tiny race remains). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      if (address === null || typeof address === "string") {
        server.close();
        reject(new Error("freePort: the OS gave no TCP address"));
        return;
      }
      const { port } = address;
      server.close(() => resolve(port));
    });
  });
}
