import net from "node:net";

/** The fake AWS credentials of the local stack (s3rver accepts only this pair). */
export const LOCAL_CREDENTIALS = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" } as const;

/** A problem starting the local stack, told to the developer in one line (no stack trace). */
export class LocalStackError extends Error {
  override name = "LocalStackError";
}

/** Resolves when something accepts TCP connections on 127.0.0.1:`port`; rejects on timeout or when `gaveUp` settles. */
export async function waitForPort(port: number, timeoutMs: number, gaveUp?: Promise<unknown>): Promise<void> {
  let stop = false;
  void gaveUp?.then(() => (stop = true));
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !stop) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect({ host: "127.0.0.1", port });
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(stop ? "the process exited" : `nothing listened within ${timeoutMs} ms`);
}

/** A port that is free on 127.0.0.1 right now (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

/** Fails with one clear line when 127.0.0.1:`port` is taken. */
export function ensurePortFree(port: number, hint: string): Promise<void> {
  if (port === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        new LocalStackError(
          error.code === "EADDRINUSE" ? `Port ${port} on 127.0.0.1 is already in use: ${hint}` : `Cannot listen on 127.0.0.1:${port}: ${error.message}`,
        ),
      ),
    );
    server.listen(port, "127.0.0.1", () => server.close(() => resolve()));
  });
}
