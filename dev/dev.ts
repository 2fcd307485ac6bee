// `npm run dev`: the whole service on this machine. Nothing that reads lib/config.ts is imported before
// the local endpoints are in process.env, because lib/config.ts reads the environment once.
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { formatUsd, SIGNUP_BONUS_MICRO_USD } from "../lib/billing/money.js";
import { packageVersion } from "../lib/packaging.js";
import { PRICES } from "../lib/routes.js";
import { startLocalChain } from "./chain.js";
import { checkJava, startDynamoDbLocal } from "./dynamodb-local.js";
import { createQueues } from "./jobs-local.js";
import { startMailLocal } from "./mail-local.js";
import { freePort, LOCAL_CREDENTIALS, LocalStackError } from "./ports.js";
import { startS3Local } from "./s3-local.js";
import { startSqsLocal } from "./sqs-local.js";

const localDefaults = async (): Promise<Record<string, string>> => ({
  STAGE: "local",
  SHOTLINE_VERSION: packageVersion(),
  AWS_REGION: "us-east-1",
});

/**
 * The local key that wraps the secrets kept at rest (lib/storage/sealed.ts; KMS on AWS): made once
 * into `<state folder>/secrets.key`, readable by its owner alone, and read again at every start.
 */
function localSecretsKey(localDir: string): string {
  const file = path.join(localDir, "secrets.key");
  try {
    return readFileSync(file, "utf8").trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  mkdirSync(localDir, { recursive: true });
  const key = randomBytes(32).toString("base64");
  writeFileSync(file, `${key}\n`, { mode: 0o600, flag: "wx" });
  return key;
}

async function main() {
  for (const [key, value] of Object.entries(await localDefaults())) process.env[key] ??= value;
  // s3rver accepts only its fixed S3RVER/S3RVER key pair; DynamoDB Local (run with -sharedDb) takes
  // any credentials and shows every client the same tables. Real AWS credentials from the
  // developer's shell never reach the local stack.
  Object.assign(process.env, { AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId, AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey });
  delete process.env.AWS_SESSION_TOKEN;
  delete process.env.AWS_PROFILE;
  const started = Date.now();
  checkJava();
  const localDir = path.resolve(process.env.LOCAL_DIR ?? ".local");
  process.env.SECRETS_LOCAL_KEY ??= localSecretsKey(localDir);
  // These services pick their own ports (no window for another process to take a chosen one), and
  // their endpoints must be in the environment before lib/config.ts is read.
  const ready: { stop(): Promise<void> }[] = [];
  const begin = async <T extends { stop(): Promise<void> }>(service: Promise<T>) => {
    const running = await service;
    ready.push(running);
    return running;
  };
  let services: {
    chain: Awaited<ReturnType<typeof startLocalChain>>;
    dynamodb: Awaited<ReturnType<typeof startDynamoDbLocal>>;
    s3: Awaited<ReturnType<typeof startS3Local>>;
    sqs: Awaited<ReturnType<typeof startSqsLocal>>;
    mail: Awaited<ReturnType<typeof startMailLocal>> | null;
  };
  // SIGNUP_VERIFICATION=on: signup bonuses wait for a mailed link, and the mail goes to a local SES
  // that keeps it (its inbox in a browser at its address), unless SES_ENDPOINT names another.
  const catchMail = process.env.SIGNUP_VERIFICATION === "on" && !process.env.SES_ENDPOINT;
  try {
    // x402 on the local chain: anvil + USDC, paid to a dev account, verified and settled in-process.
    const chain = await begin(startLocalChain(await freePort()));
    const dynamodb = await begin(startDynamoDbLocal({ dbPath: process.env.LOCAL_EPHEMERAL === "1" ? null : path.join(localDir, "dynamodb") }));
    const s3 = await begin(startS3Local({ directory: path.join(localDir, "s3") }));
    // The jobs' queues (docs/api.md, "Jobs"): in memory, like Lambda's SQS sources they feed their consumers in process.
    const sqs = await begin(startSqsLocal());
    if (catchMail) process.env.VERIFY_EMAIL_TEMPLATE ??= "shotline-verify-email";
    const mail = catchMail ? await begin(startMailLocal(process.env.VERIFY_EMAIL_TEMPLATE!)) : null;
    services = { chain, dynamodb, s3, sqs, mail };
  } catch (error) {
    for (const service of ready.reverse()) await service.stop().catch(() => undefined);
    throw error;
  }
  const { chain, dynamodb, s3, sqs, mail } = services;
  // A message whose consumer did not finish it comes back after this: the stack's is 6 x the
  // consumer's timeout (15 min for items); locally a minute, unless JOBS_VISIBILITY_SECONDS says
  // otherwise (tests).
  const queues = await createQueues(sqs.endpoint, Number(process.env.JOBS_VISIBILITY_SECONDS ?? 60));
  if (mail) Object.assign(process.env, { SES_ENDPOINT: mail.endpoint, MAIL_FROM: process.env.MAIL_FROM ?? "signup@shotline.test" });
  // The crawler's User-Agent names this server's reference page (on a port picked at random, none).
  const port = Number(process.env.PORT ?? 3000);
  if (port) process.env.CRAWLER_INFO_URL ??= `http://127.0.0.1:${port}/docs#crawler`;
  Object.assign(process.env, {
    DYNAMODB_ENDPOINT: dynamodb.endpoint,
    S3_ENDPOINT: s3.endpoint,
    SQS_ENDPOINT: sqs.endpoint,
    JOBS_QUEUE_URL: queues.jobs.queueUrl,
    WEBHOOKS_QUEUE_URL: queues.webhooks.queueUrl,
    X402_NETWORK: `eip155:${chain.chainId}`,
    X402_V1_NETWORK: "base-sepolia",
    X402_ASSET: chain.usdcAddress,
    X402_PAY_TO: chain.payTo,
    X402_RPC_URL: chain.rpcUrl,
    X402_FACILITATOR_PRIVATE_KEY: chain.facilitatorPrivateKey,
    AUTO_TOPUP_PRIVATE_KEY: chain.topUpPrivateKey,
  });
  const { startLocalStack } = await import("./stack.js");
  const stack = await startLocalStack({ chain, dynamodb, s3, sqs, queues, mail });
  const { baseUrl } = stack.info;
  console.log(
    [
      ``,
      `Shotline is running at ${baseUrl}  (started in ${((Date.now() - started) / 1000).toFixed(1)} s)`,
      ``,
      `  Dashboard (sign up, balance, usage, top-up): ${baseUrl}/dashboard`,
      `  curl -s ${baseUrl}/api/v1/health`,
      ``,
      `  Get an API key (${SIGNUP_BONUS_MICRO_USD / PRICES.screenshot} free screenshots), then take a screenshot (${formatUsd(PRICES.screenshot)}, mockup ${formatUsd(PRICES.mockup)}) with it:`,
      `  curl -s -X POST ${baseUrl}/api/v1/signup -H 'content-type: application/json' -d '{"email":"you@example.com"}'`,
      `  curl -s -X POST ${baseUrl}/api/v1/screenshot -H 'content-type: application/json' \\`,
      `       -H "Authorization: Bearer $KEY" -d '{"url":"https://example.com"}' -o shot.png`,
      `  More credit: npm run admin -- credit you@example.com 5, or in USDC: npm run pay -- --topup 500 --key $KEY`,
      ``,
      `  Or pay per request like an agent, in USDC on the local chain (x402): npm run pay -- https://example.com`,
      ``,
      ...(mail ? [`  Signup verification is on: the mails (with their links) are at ${mail.endpoint}`, ``] : []),
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
