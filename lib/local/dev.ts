// `npm run dev`: the whole service on this machine. This file imports only Node built-ins before it
// has set the local endpoints in process.env, because lib/config.ts reads the environment once.
import path from "node:path";
import { freePort, LocalStackError } from "./ports.js";

const localDefaults = async (): Promise<Record<string, string>> => ({
  STAGE: "local",
  AWS_REGION: "us-east-1",
  // DynamoDB Local keeps one database per credentials + region unless -sharedDb; we pass -sharedDb
  // and fixed fake credentials so every client (server, tests, admin CLI) sees the same tables.
  AWS_ACCESS_KEY_ID: "local",
  AWS_SECRET_ACCESS_KEY: "local",
  DYNAMODB_ENDPOINT: `http://127.0.0.1:${await freePort()}`,
  S3_ENDPOINT: `http://127.0.0.1:${await freePort()}`,
});

async function main() {
  for (const [key, value] of Object.entries(await localDefaults())) process.env[key] ??= value;
  const { startLocalStack } = await import("./stack.js");
  const started = Date.now();
  const stack = await startLocalStack({ persist: process.env.LOCAL_EPHEMERAL !== "1" });
  const { baseUrl } = stack.info;
  const localDir = path.resolve(process.env.LOCAL_DIR ?? ".local");
  console.log(
    [
      ``,
      `Shotline is running at ${baseUrl}  (started in ${((Date.now() - started) / 1000).toFixed(1)} s)`,
      ``,
      `  curl -s ${baseUrl}/api/v1/health`,
      `  curl -s -X POST ${baseUrl}/api/v1/screenshot -H 'content-type: application/json' \\`,
      `       -d '{"url":"https://example.com"}' -o shot.png`,
      ``,
      `  DynamoDB Local ${stack.info.dynamodbEndpoint} · S3 (s3rver) ${stack.info.s3Endpoint} · state in ${localDir}`,
      `  Connection details for scripts: ${path.join(localDir, "dev.json")}`,
      `  Ctrl-C stops everything.`,
      ``,
    ].join("\n"),
  );
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`\n${signal}: stopping Shotline...`);
    await stack.stop();
    process.exit(0);
  };
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
}

main().catch((error: unknown) => {
  if (error instanceof LocalStackError) console.error(`npm run dev: ${error.message}`);
  else console.error("npm run dev failed:", error);
  process.exit(1);
});
