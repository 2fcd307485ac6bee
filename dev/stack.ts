import { mkdirSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { CreateTableCommand, DescribeTableCommand, ResourceNotFoundException, UpdateTimeToLiveCommand } from "@aws-sdk/client-dynamodb";
import { CreateBucketCommand, HeadBucketCommand } from "@aws-sdk/client-s3";
import { dynamodb } from "../lib/billing/dynamodb.js";
import { config } from "../lib/config.js";
import { describeError, log } from "../lib/log.js";
import { sweepChecks } from "../lib/monitors/outcomes.js";
import { scheduleChecks } from "../lib/monitors/schedule.js";
import { TABLE } from "../lib/packaging.js";
import { reconcile } from "../lib/payments/reconcile.js";
import { closeBrowser, warmUp } from "../lib/render/browser.js";
import { consumers } from "../lib/routes.js";
import { s3 } from "../lib/storage/s3.js";
import type { LocalChain } from "./chain.js";
import type { DynamoDbLocal } from "./dynamodb-local.js";
import { type LocalQueues, pollJobs, type Worker } from "./jobs-local.js";
import type { MailLocal } from "./mail-local.js";
import { ensurePortFree } from "./ports.js";
import type { S3Local } from "./s3-local.js";
import { loadHandler, startLocalServer } from "./server.js";
import type { SqsLocal } from "./sqs-local.js";

/** What `npm run dev` writes to .local/dev.json for scripts and tests. */
export interface DevInfo {
  baseUrl: string;
  dynamodbEndpoint: string;
  s3Endpoint: string;
  tableName: string;
  bucketName: string;
  region: string;
  /** The local chain for x402 payments (anvil + Circle's USDC). */
  rpcUrl: string;
  chainId: number;
  network: string;
  usdcAddress: string;
  payTo: string;
  /** DEV ONLY: a well-known anvil test key holding local USDC, for `npm run pay` and tests. Never real money. */
  payerPrivateKey: string;
}

export interface LocalStack {
  readonly info: DevInfo;
  stop(): Promise<void>;
}

/** Creates the table (and its TTL) in DynamoDB Local unless it already exists from an earlier run. */
export async function ensureTable(): Promise<void> {
  try {
    await dynamodb.send(new DescribeTableCommand({ TableName: config.TABLE_NAME }));
    return;
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
  }
  // On-demand, keyed and expiring like the deployed table (stacks/Storage.ts), from the same definition.
  await dynamodb.send(
    new CreateTableCommand({
      TableName: config.TABLE_NAME,
      BillingMode: "PAY_PER_REQUEST",
      AttributeDefinitions: Object.keys(TABLE.fields).map((name) => ({ AttributeName: name, AttributeType: "S" })),
      KeySchema: [
        { AttributeName: TABLE.primaryIndex.partitionKey, KeyType: "HASH" },
        { AttributeName: TABLE.primaryIndex.sortKey, KeyType: "RANGE" },
      ],
    }),
  );
  await dynamodb.send(
    new UpdateTimeToLiveCommand({
      TableName: config.TABLE_NAME,
      TimeToLiveSpecification: { AttributeName: TABLE.timeToLiveAttribute, Enabled: true },
    }),
  );
}

/** Creates the output bucket in s3rver unless it already exists from an earlier run. */
async function ensureBucket(): Promise<void> {
  try {
    await s3.send(new HeadBucketCommand({ Bucket: config.BUCKET_NAME }));
  } catch {
    await s3.send(new CreateBucketCommand({ Bucket: config.BUCKET_NAME }));
  }
}

/**
 * Completes the local stack on 127.0.0.1 around the services dev.ts started first (their endpoints
 * must be in the environment before lib/config.ts is read): the table and bucket, Chromium, then
 * the API serving the route table. Stops everything, those services included, if any step fails.
 */
export async function startLocalStack(services: {
  chain: LocalChain;
  dynamodb: DynamoDbLocal;
  s3: S3Local;
  sqs: SqsLocal;
  queues: LocalQueues;
  mail: MailLocal | null;
}): Promise<LocalStack> {
  const { chain, dynamodb: ddb, s3: s3Local, sqs, queues, mail } = services;
  const stops: (() => Promise<void>)[] = [chain.stop, ddb.stop, s3Local.stop, sqs.stop, ...(mail ? [mail.stop] : [])];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    stops.length = 0;
  };
  try {
    await ensurePortFree(config.PORT, `stop the other process or start on another port, e.g. PORT=${config.PORT + 1} npm run dev`);
    const localDir = path.resolve(config.LOCAL_DIR);
    mkdirSync(localDir, { recursive: true });
    await ensureTable();
    await ensureBucket();
    // Launch Chromium now rather than on the first request, as a warm Lambda container would have it.
    stops.push(closeBrowser);
    await warmUp();
    // The reconciler, as the deployed stack schedules it (every minute), and more often when the
    // grace period is short (tests): a charge whose request died is refunded after the grace period,
    // a pending x402 settlement confirmed on chain.
    const graceMs = config.RECONCILE_GRACE_SECONDS * 1000;
    const reconciler = setInterval(
      () => void reconcile(Date.now()).catch((error: unknown) => log.error("reconciler failed", { error: describeError(error) })),
      Math.min(60_000, graceMs / 2),
    );
    stops.push(async () => clearInterval(reconciler));
    // The monitors' schedule, every minute as deployed: the checks due are queued, each once.
    const monitorSchedule = setInterval(
      () =>
        void sweepChecks(Date.now())
          .then(() => scheduleChecks(Date.now()))
          .catch((error: unknown) => log.error("monitors' schedule failed", { error: describeError(error) })),
      60_000,
    );
    stops.push(async () => clearInterval(monitorSchedule));
    // The consumers (the jobs worker, the webhook sender), each fed by its local queue as Lambda's
    // event source feeds it: as many at once as its row says (on AWS its reserved concurrency), and
    // one that renders no more than the browser does.
    for (const consumer of consumers) {
      const at = consumer.browser ? Math.min(consumer.concurrency, config.RENDER_CONCURRENCY) : consumer.concurrency;
      stops.push(pollJobs(sqs.endpoint, queues[consumer.queue], await loadHandler<Worker>(consumer.id), at).stop);
    }
    const server = await startLocalServer(config.PORT);
    stops.push(() => new Promise<void>((resolve) => server.close(() => resolve())).then(() => undefined));
    stops.push(async () => server.closeAllConnections());
    const info: DevInfo = {
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      dynamodbEndpoint: ddb.endpoint,
      s3Endpoint: s3Local.endpoint,
      tableName: config.TABLE_NAME,
      bucketName: config.BUCKET_NAME,
      region: config.AWS_REGION,
      rpcUrl: chain.rpcUrl,
      chainId: chain.chainId,
      network: `eip155:${chain.chainId}`,
      usdcAddress: chain.usdcAddress,
      payTo: chain.payTo,
      payerPrivateKey: chain.payerPrivateKey,
    };
    writeFileSync(path.join(localDir, "dev.json"), `${JSON.stringify(info, null, 2)}\n`);
    return { info, stop: stopAll };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
