import { Duration, RemovalPolicy } from "aws-cdk-lib";
import { Key } from "aws-cdk-lib/aws-kms";
import { BlockPublicAccess, BucketEncryption } from "aws-cdk-lib/aws-s3";
import { Bucket, type StackContext, Table } from "sst/constructs";
import {
  CACHE_PREFIX,
  CACHE_RETENTION_DAYS,
  isDevelopmentStage,
  JOB_RETENTION_DAYS,
  JOBS_PREFIX,
  MONITOR_CHECKS_PREFIX,
  MONITOR_HISTORY_DAYS,
  OUTPUT_RETENTION_DAYS,
  TABLE,
} from "../lib/packaging.js";

/** The ledger table, the bucket for outputs too large to return inline, and the key that wraps the secrets kept at rest. */
export function Storage({ stack, app }: StackContext) {
  // Customers' balances and what they paid for: kept unless the stage is for development.
  const protect = !isDevelopmentStage(app.stage);
  const table = new Table(stack, "Ledger", {
    fields: { ...TABLE.fields },
    primaryIndex: { ...TABLE.primaryIndex },
    timeToLiveAttribute: TABLE.timeToLiveAttribute,
    cdk: {
      table: {
        pointInTimeRecovery: true,
        deletionProtection: protect,
        removalPolicy: protect ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
      },
    },
  });

  const outputs = new Bucket(stack, "Outputs", {
    cdk: {
      bucket: {
        blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
        encryption: BucketEncryption.S3_MANAGED,
        enforceSSL: true,
        lifecycleRules: [
          // Large outputs and kept answers: a day. Cached renders: a day past their class's longest TTL.
          { id: "expire-outputs", enabled: true, prefix: "outputs/", expiration: Duration.days(OUTPUT_RETENTION_DAYS) },
          { id: "expire-answers", enabled: true, prefix: "answers/", expiration: Duration.days(OUTPUT_RETENTION_DAYS) },
          // A job's requests, results and outputs: as long as the job. A crawl's whole result written in
          // parts (lib/crawl/result.ts) by a worker that died: its parts are aborted after a day.
          {
            id: "expire-jobs",
            enabled: true,
            prefix: JOBS_PREFIX,
            expiration: Duration.days(JOB_RETENTION_DAYS),
            abortIncompleteMultipartUploadAfter: Duration.days(1),
          },
          // A monitor's checks' images: as long as its history. Its baseline (monitor-baselines/) is kept until the monitor is deleted.
          { id: "expire-monitor-checks", enabled: true, prefix: MONITOR_CHECKS_PREFIX, expiration: Duration.days(MONITOR_HISTORY_DAYS) },
          ...CACHE_RETENTION_DAYS.map((days) => ({
            id: `expire-cache-d${days}`,
            enabled: true,
            prefix: `${CACHE_PREFIX}d${days}/`,
            expiration: Duration.days(days + 1),
          })),
        ],
        removalPolicy: protect ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
        autoDeleteObjects: !protect,
      },
    },
  });

  // Secrets at rest (lib/storage/sealed.ts): each sealed under a data key of its own, which this key
  // wraps. Kept with the table: a monitor's secrets are sealed for its life.
  const secrets = new Key(stack, "Secrets", {
    description: "Shotline: wraps the data keys of the secrets kept with job items and monitors",
    enableKeyRotation: true,
    removalPolicy: protect ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    ...(protect ? {} : { pendingWindow: Duration.days(7) }),
  });

  // What `npm run admin -- seal-monitors` is given as SECRETS_KEY_ID (docs/deploy.md).
  stack.addOutputs({ SecretsKeyArn: secrets.keyArn });

  return { table, outputs, secrets };
}
