import { spawn } from "node:child_process";
import { existsSync, lstatSync, mkdtempSync, readdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { App } from "sst/constructs";
import { initProject } from "sst/project.js";
import { CHROMIUM_BOOT_FILE } from "../../lib/packaging.js";
import sstConfig from "../../sst.config.js";
import { LOCAL_CREDENTIALS } from "../ports.js";
import type { DevInfo } from "../stack.js";
import { stackEnvironment } from "./dev-process.js";

// What `sst deploy` builds, offline, and a way to run it as Lambda would: the app synthesized as
// stage "test" (functions bundled with esbuild into .sst/artifacts, layers built into .build/layers),
// and a bundled function invoked in a fresh Node process. For test/infra and the cold-start bench.

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const layer = (name: string) => path.join(root, ".build", "layers", name, name);

/** Synthesizes the app as `stage` into a new temp folder (the cloud assembly, with copies of the layers); returns it. */
export async function synthesize(stage = "test"): Promise<string> {
  // As an operator would deploy with x402 on: the pay-to address comes from the environment.
  process.env.X402_PAY_TO ??= "0x000000000000000000000000000000000000bEEF";
  // And with signup verification mailed from an address verified in SES.
  process.env.SHOTLINE_MAIL_FROM ??= "signup@example.com";
  // And auto-topup offered, with a top-up key (anvil's well-known account #4: never money).
  process.env.SHOTLINE_AUTO_TOPUP_PRIVATE_KEY ??= "0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a";
  // SST's test mode skips the bootstrap lookup in the AWS account (vitest sets it itself); nothing here talks to AWS.
  process.env.NODE_ENV ??= "test";
  process.env.AWS_ACCESS_KEY_ID ??= LOCAL_CREDENTIALS.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY ??= LOCAL_CREDENTIALS.secretAccessKey;
  await initProject({ stage });
  const outdir = mkdtempSync(path.join(tmpdir(), "shotline-cdk-"));
  const app = new App({ mode: "deploy", stage, name: "shotline", region: "us-east-1", account: "123456789012" }, { outdir });
  await sstConfig.stacks(app);
  await app.finish();
  return outdir;
}

/** The newest build of the function `id` in .sst/artifacts (folders are named by a hash; older builds stay behind). */
export function artifactOf(id: string): string {
  const artifacts = path.join(root, ".sst", "artifacts");
  const built = (d: string) => statSync(path.join(d, "functions", `${id}.mjs`)).mtimeMs;
  const builds = readdirSync(artifacts)
    .map((d) => path.join(artifacts, d))
    .filter((d) => existsSync(path.join(d, "functions", `${id}.mjs`)))
    .sort((a, b) => built(b) - built(a));
  if (!builds[0]) throw new Error(`no build of the function ${id} in ${artifacts}`);
  return builds[0];
}

/** Bytes under `dir` (symlinks counted as links, as a zip stores them). */
const bytesUnder = (dir: string): number =>
  readdirSync(dir).reduce((sum, name) => {
    const entry = lstatSync(path.join(dir, name));
    return sum + (entry.isDirectory() ? bytesUnder(path.join(dir, name)) : entry.size);
  }, 0);

/** What a rendering function `id` of the last synthesis holds unzipped, in bytes: its code, each layer, and all together (Lambda's limit is 250 MiB). */
export function deploymentSize(id: string): { code: number; layers: Record<"chromium" | "fonts" | "filter-lists", number>; total: number } {
  const layers = { chromium: 0, fonts: 0, "filter-lists": 0 };
  for (const name of Object.keys(layers) as (keyof typeof layers)[]) layers[name] = bytesUnder(path.join(root, ".build", "layers", name));
  const code = bytesUnder(artifactOf(id));
  return { code, layers, total: code + layers.chromium + layers.fonts + layers["filter-lists"] };
}

/**
 * The environment of a bundled function run here as on Lambda: the layers' folders stand in for
 * /opt/chromium, /opt/fonts and /opt/filter-lists (the deployed variables point there), and
 * AWS_LAMBDA_FUNCTION_NAME is set as Lambda sets it (not AWS_EXECUTION_ENV: this is not Amazon
 * Linux, whose extra libraries would not belong here). The ledger is the local stack's DynamoDB
 * Local (AWS itself cannot run here). `tmp` is the function's /tmp.
 */
export function lambdaEnvironment(dir: string, info: DevInfo, tmp: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: tmp,
    TMPDIR: tmp,
    AWS_LAMBDA_FUNCTION_NAME: "shotline-bundle",
    ...stackEnvironment(info),
    CHROMIUM_BIN_DIR: layer("chromium"),
    NODE_OPTIONS: `--import=${path.join(layer("chromium"), CHROMIUM_BOOT_FILE)}`,
    FONTS_DIR: layer("fonts"),
    FILTER_LISTS_DIR: layer("filter-lists"),
    AUTOCONSENT_DIR: path.join(dir, "autoconsent"),
    LOG_LEVEL: "error",
  };
}

export interface Invocation {
  result: { statusCode: number; headers: Record<string, string>; body: string; isBase64Encoded?: boolean };
  /** Process start -> INIT done (the handler's module imported). */
  init_ms: number;
  /** The first invocation, start to answer. */
  invoke_ms: number;
  /** Spawning the process -> its answer, as measured from outside. */
  total_ms: number;
}

/**
 * Runs a Node script in a fresh process with `env` and waits for the first line it prints; returns
 * the line and the ms from spawning to it. Fails if the process exits first or exceeds `timeoutMs`.
 */
export function firstLine(args: readonly string[], env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<{ line: string; ms: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (!out.includes("\n")) return;
      clearTimeout(timer);
      resolve({ line: out.slice(0, out.indexOf("\n")), ms: performance.now() - started });
    });
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
    // "close", not "exit": a process may exit before the pipe has handed over all it wrote (a long line).
    child.once("close", (code) => {
      clearTimeout(timer);
      if (!out.includes("\n")) reject(new Error(`${args.join(" ").slice(0, 200)} exited (${code}) without answering:\n${err.slice(-2000)}`));
    });
  });
}

/**
 * Runs dev/harness/invoke-bundle.mjs: a fresh Node process imports the bundled function `name` of
 * `dir` and invokes it once with a POST of `body` (an API key in `apiKey`), in `env`.
 */
export async function invokeBundle(dir: string, name: string, body: unknown, apiKey: string, env: NodeJS.ProcessEnv): Promise<Invocation> {
  const { line, ms } = await firstLine([path.join(root, "dev/harness/invoke-bundle.mjs"), dir, name, JSON.stringify(body), apiKey], env);
  return { ...(JSON.parse(line) as Omit<Invocation, "total_ms">), total_ms: Math.round(ms) };
}
