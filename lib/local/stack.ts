import { CreateTableCommand, DescribeTableCommand, ResourceNotFoundException, UpdateTimeToLiveCommand } from "@aws-sdk/client-dynamodb";
import { mkdirSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { dynamodb } from "../billing/dynamodb.js";
import { createTableInput, TABLE } from "../billing/table.js";
import { config } from "../config.js";
import { closeBrowser, warmUp } from "../render/browser.js";
import type { LocalChain } from "./chain.js";
import { startDynamoDbLocal } from "./dynamodb-local.js";
import { ensurePortFree } from "./ports.js";
import { startS3Local } from "./s3-local.js";
import { startLocalServer } from "./server.js";

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

const portOf = (endpoint: string | undefined, name: string) => {
  if (!endpoint) throw new Error(`${name} must be set for the local stack (lib/local/dev.ts sets it).`);
  return Number(new URL(endpoint).port);
};

/** Creates the table (and its TTL) in DynamoDB Local unless it already exists from an earlier run. */
async function ensureTable(): Promise<void> {
  try {
    await dynamodb.send(new DescribeTableCommand({ TableName: config.TABLE_NAME }));
    return;
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
  }
  await dynamodb.send(new CreateTableCommand(createTableInput(config.TABLE_NAME)));
  await dynamodb.send(
    new UpdateTimeToLiveCommand({
      TableName: config.TABLE_NAME,
      TimeToLiveSpecification: { AttributeName: TABLE.timeToLiveAttribute, Enabled: true },
    }),
  );
}

/**
 * Starts the whole service on 127.0.0.1: DynamoDB Local, s3rver, Chromium, then the API serving
 * the route table, with the local chain (started by dev.ts, since config needs its details) taken
 * down with the rest. State lives under LOCAL_DIR. Stops what it started if any step fails.
 */
export async function startLocalStack(options: { persist: boolean; chain: LocalChain }): Promise<LocalStack> {
  const { chain } = options;
  const stops: (() => Promise<void>)[] = [options.chain.stop];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    stops.length = 0;
  };
  try {
    await ensurePortFree(config.PORT, `stop the other process or start on another port, e.g. PORT=${config.PORT + 1} npm run dev`);
    const localDir = path.resolve(config.LOCAL_DIR);
    mkdirSync(localDir, { recursive: true });
    const ddb = await startDynamoDbLocal({
      port: portOf(config.DYNAMODB_ENDPOINT, "DYNAMODB_ENDPOINT"),
      dbPath: options.persist ? path.join(localDir, "dynamodb") : null,
    });
    stops.push(ddb.stop);
    await ensureTable();
    const s3 = await startS3Local({
      port: portOf(config.S3_ENDPOINT, "S3_ENDPOINT"),
      directory: path.join(localDir, "s3"),
      bucket: config.BUCKET_NAME,
    });
    stops.push(s3.stop);
    // Launch Chromium now rather than on the first request, as a warm Lambda container would have it.
    stops.push(closeBrowser);
    await warmUp();
    const server = await startLocalServer(config.PORT);
    stops.push(() => new Promise<void>((resolve) => server.close(() => resolve())).then(() => undefined));
    stops.push(async () => server.closeAllConnections());
    const info: DevInfo = {
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      dynamodbEndpoint: ddb.endpoint,
      s3Endpoint: s3.endpoint,
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
