import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { createWriteStream, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { LOCAL_CREDENTIALS } from "../ports.js";
import type { DevInfo } from "../stack.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

export interface DevProcess {
  child: ChildProcess;
  info: DevInfo;
  localDir: string;
  output: () => string;
  stop: (signal?: NodeJS.Signals) => Promise<number | null>;
}

/** The variables that point a process (a test worker, a bundled function) at the local stack's DynamoDB Local and s3rver. */
export const stackEnvironment = (info: DevInfo) => ({
  TABLE_NAME: info.tableName,
  BUCKET_NAME: info.bucketName,
  DYNAMODB_ENDPOINT: info.dynamodbEndpoint,
  S3_ENDPOINT: info.s3Endpoint,
  AWS_REGION: info.region,
  AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
  AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
});

/** Starts what `npm run dev` starts (node --import tsx dev/dev.ts) as a child process. */
export function spawnDev(env: Record<string, string> = {}) {
  const localDir = mkdtempSync(path.join(tmpdir(), "shotline-dev-"));
  let output = "";
  const child = spawn(process.execPath, ["--import", "tsx", "dev/dev.ts"], {
    cwd: root,
    env: { ...process.env, PORT: "0", LOCAL_DIR: localDir, LOCAL_EPHEMERAL: "1", LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  // Everything it writes, also kept in <state folder>/dev.log while it runs (test/final scans it).
  const logFile = createWriteStream(path.join(env.LOCAL_DIR ?? localDir, "dev.log")).on("error", () => undefined);
  for (const stream of [child.stdout, child.stderr])
    stream.on("data", (c: Buffer) => {
      output += c.toString();
      logFile.write(c);
    });
  child.once("exit", () => logFile.end());
  // The state folder goes with the process (a test that passes its own LOCAL_DIR keeps it).
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => {
      rmSync(localDir, { recursive: true, force: true });
      resolve(code);
    }),
  );
  const usedDir = env.LOCAL_DIR ?? localDir;
  return { child, localDir: usedDir, output: () => output, exited };
}

/** What a started local stack wrote to `<localDir>/dev.json`: its endpoints, table, bucket and chain. */
export const readDevInfo = (localDir: string): DevInfo => JSON.parse(readFileSync(path.join(localDir, "dev.json"), "utf8")) as DevInfo;

/** Starts the local stack and waits until it has written .local/dev.json. */
export async function startDev(env: Record<string, string> = {}, timeoutMs = 60_000): Promise<DevProcess> {
  const { child, localDir, output, exited } = spawnDev(env);
  const devJson = path.join(localDir, "dev.json");
  const deadline = Date.now() + timeoutMs;
  let done = false;
  void exited.then(() => (done = true));
  while (!existsSync(devJson) || !output().includes("running at")) {
    if (done || Date.now() > deadline) throw new Error(`local stack did not start:\n${output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    child,
    info: readDevInfo(localDir),
    localDir,
    output,
    stop: async (signal = "SIGTERM") => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Runs `npm run admin -- ...args` against the local stack whose state is in `localDir`; returns its output. */
export function admin(localDir: string, ...args: string[]): string {
  return execFileSync(process.execPath, ["--import", "tsx", "dev/admin-cli.ts", ...args], {
    cwd: root,
    env: { ...process.env, LOCAL_DIR: localDir, TABLE_NAME: "" },
    encoding: "utf8",
  });
}

/** Signs up `email` on the stack at `baseUrl`; returns the new API key and account id. */
export async function signUp(baseUrl: string, email: string): Promise<{ api_key: string; account_id: string }> {
  const res = await fetch(`${baseUrl}/api/v1/signup`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email }) });
  if (res.status !== 201) throw new Error(`signup of ${email} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as { api_key: string; account_id: string };
}

/** Signs up `email` and, as an operator would, credits it `dollars` and lifts its rate limit to 1,000/s and its renders in flight to 1,000; returns its API key. */
export async function fundedKey(baseUrl: string, localDir: string, email: string, dollars: number): Promise<string> {
  const { api_key: apiKey } = await signUp(baseUrl, email);
  admin(localDir, "credit", email, String(dollars));
  // Tests share these keys across files and fire renders together: past any default limit.
  admin(localDir, "limit", email, "1000", "1000");
  return apiKey;
}
