import { mkdirSync } from "node:fs";
import S3rver from "s3rver";

export interface S3Local {
  readonly endpoint: string;
  stop(): Promise<void>;
}

/** Starts s3rver in-process on 127.0.0.1 (a port the OS picks), objects kept under `directory`. */
export async function startS3Local(options: { directory: string }): Promise<S3Local> {
  mkdirSync(options.directory, { recursive: true });
  const server = new S3rver({
    address: "127.0.0.1",
    port: 0,
    directory: options.directory,
    silent: true,
  });
  const { port } = await server.run();
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stop: () => server.close(),
  };
}
