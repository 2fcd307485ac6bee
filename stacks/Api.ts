import { Duration } from "aws-cdk-lib";
import { CfnRoute, type CfnStage } from "aws-cdk-lib/aws-apigatewayv2";
import { PolicyStatement } from "aws-cdk-lib/aws-iam";
import { SqsEventSource } from "aws-cdk-lib/aws-lambda-event-sources";
import { Secret } from "aws-cdk-lib/aws-secretsmanager";
import { CfnTemplate } from "aws-cdk-lib/aws-ses";
import { Queue } from "aws-cdk-lib/aws-sqs";
import type { Function as Fn } from "sst/constructs";
import { Cron, Function as DeployedFunction, type FunctionProps, Api as HttpApi, type StackContext, use } from "sst/constructs";
import { privateKeyToAccount } from "viem/accounts";
import { VERIFY_MAIL } from "../lib/billing/verify-mail.js";
import { CHROMIUM_BOOT_FILE, COPIED_FILES, copiedDir, isDevelopmentStage, JOB_MAX_RECEIVES, LAYER_MOUNTS, packageVersion } from "../lib/packaging.js";
import { type Cap, type Consumer, consumers, type FunctionRow, fallbackRoute, httpRoutes, schedules, type Use, workers } from "../lib/routes.js";
import { awsActionsOf, chromeHarVersion, leanDynamoDbDocuments } from "./bundles.js";
import { Layers } from "./Layers.js";
import { Storage } from "./Storage.js";

const X402_VARIABLES = [
  "X402_PAY_TO",
  "X402_NETWORK",
  "X402_V1_NETWORK",
  "X402_ASSET",
  "X402_ASSET_NAME",
  "X402_ASSET_VERSION",
  "X402_FACILITATOR_URL",
  "X402_RPC_URL",
  "X402_SETTLE_RESERVE_SECONDS",
  "X402_SETTLE_TIMEOUT_SECONDS",
] as const;

/**
 * Free routes' reserved concurrency needs an account whose Lambda concurrency quota leaves 100
 * unreserved (the default quota is 1,000; new accounts may start far lower): deploy with
 * SHOTLINE_RESERVED_CONCURRENCY=off until the quota is raised (the gateway's throttling stays).
 */
/** S3 actions granted on the bucket itself rather than on its objects. */
const BUCKET_ACTIONS = new Set(["s3:ListBucket"]);

/** CRAWLER_INFO_URL from the deploy's SHOTLINE_CRAWLER_INFO_URL, else the reference page on SHOTLINE_DOMAIN, else none (docs/deploy.md). */
const crawlerInfo = (): Record<string, string> => {
  const url = process.env.SHOTLINE_CRAWLER_INFO_URL ?? (process.env.SHOTLINE_DOMAIN ? `https://${process.env.SHOTLINE_DOMAIN}/docs#crawler` : undefined);
  return url ? { CRAWLER_INFO_URL: url } : {};
};

const reserveConcurrency = () => process.env.SHOTLINE_RESERVED_CONCURRENCY !== "off";

/** The X402_* variables set where `sst deploy` runs (without X402_PAY_TO, x402 is not offered). */
const x402Environment = (): Record<string, string> =>
  Object.fromEntries(X402_VARIABLES.flatMap((name) => (process.env[name] ? [[name, process.env[name]!]] : [])));

/**
 * Signup bonuses wait for a mailed link on every deployed stage (SIGNUP_VERIFICATION, docs/api.md),
 * sent through SES from SHOTLINE_MAIL_FROM, an address or domain verified in SES (docs/deploy.md).
 * SHOTLINE_SIGNUP_VERIFICATION=off deploys without it: immediate bonuses, no mail.
 */
export function mailSettings(): { from: string } | null {
  if (process.env.SHOTLINE_SIGNUP_VERIFICATION === "off") return null;
  const from = process.env.SHOTLINE_MAIL_FROM;
  if (!from || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(from))
    throw new Error(
      "Set SHOTLINE_MAIL_FROM to the address (verified in Amazon SES) that sends signup verification mails, or deploy with SHOTLINE_SIGNUP_VERIFICATION=off (docs/deploy.md)",
    );
  return { from };
}

/**
 * Auto-topup's key (docs/deploy.md): the top-up address that customers grant allowances to and that
 * sends their pulls, paying the gas. A secret of its own, from the deploying shell; unset, auto-topup
 * is not offered. Only the functions that send hold it; the others know its address.
 */
function autoTopupKey(): { key: string; address: string } | null {
  const key = process.env.SHOTLINE_AUTO_TOPUP_PRIVATE_KEY;
  if (!key) return null;
  if (!/^0x[0-9a-fA-F]{64}$/.test(key)) throw new Error("SHOTLINE_AUTO_TOPUP_PRIVATE_KEY must be a private key: 0x and 64 hex digits (docs/deploy.md)");
  return { key, address: privateKeyToAccount(key as `0x${string}`).address };
}

/** What a function gets for each thing its row `uses`: a Record over every Use, so none can go ungranted. */
type Grant = {
  environment: Record<string, string>;
  permissions: NonNullable<FunctionProps["permissions"]>;
  copyFiles: NonNullable<FunctionProps["copyFiles"]>;
};

/** API Gateway HTTP API: one route and one Lambda per row of lib/routes.ts, plus the 404/405 catch-all. */
export function Api({ stack, app }: StackContext) {
  const { table, outputs, secrets } = use(Storage);
  const layers = use(Layers);
  // The header our CloudFront adds to what it sends the API (stacks/Cdn.ts): made once by Secrets
  // Manager, the same on both sides, read by the functions as EDGE_SECRET (lib/http/client-address.ts).
  const edgeSecret = new Secret(stack, "EdgeSecret", {
    description: "Shotline: the header CloudFront adds, proving a request came through the stack's distribution",
    generateSecretString: { excludePunctuation: true, passwordLength: 48 },
  });

  // The verification mail's template in SES, from the text in lib/billing/mail.ts.
  const mail = mailSettings();
  const template = `shotline-${app.stage}-verify-email`;
  if (mail)
    new CfnTemplate(stack, "VerifyEmailTemplate", {
      template: { templateName: template, subjectPart: VERIFY_MAIL.subject, textPart: VERIFY_MAIL.text, htmlPart: VERIFY_MAIL.html },
    });
  // Sending is allowed from the sender's address (or its domain, whichever SES verified) with that template alone.
  const mailResources = mail
    ? [mail.from, mail.from.split("@")[1]!].map((identity) => stack.formatArn({ service: "ses", resource: "identity", resourceName: identity }))
    : [];
  mailResources.push(stack.formatArn({ service: "ses", resource: "template", resourceName: template }));

  // The consumers' queues (docs/api.md, "Jobs"): jobs (a message per item) and webhooks (a message
  // per delivery attempt), each delivered to its consumer (lib/routes.ts) one at a time. A message
  // comes back when its consumer did not finish it, after six times the consumer's timeout (as
  // Lambda advises for SQS sources), and past JOB_MAX_RECEIVES deliveries goes to its dead-letter
  // queue, kept 14 days for the operator to look into.
  const deadLetters: Record<string, Queue> = {};
  const queueOf = (row: Consumer) => {
    const name = `${row.queue[0]!.toUpperCase()}${row.queue.slice(1)}`;
    deadLetters[name] = new Queue(stack, `${name}DeadLetters`, { retentionPeriod: Duration.days(14), enforceSSL: true });
    return new Queue(stack, name, {
      visibilityTimeout: Duration.seconds(6 * row.timeoutSeconds),
      retentionPeriod: Duration.days(4),
      enforceSSL: true,
      deadLetterQueue: { queue: deadLetters[name], maxReceiveCount: JOB_MAX_RECEIVES },
    });
  };
  const queues = Object.fromEntries(consumers.map((row) => [row.queue, queueOf(row)])) as Record<Consumer["queue"], Queue>;

  const topUp = autoTopupKey();
  // The auto-topup worker, invoked asynchronously by the functions that charge (lib/payments/auto-topup-launch.ts).
  let worker: Fn | undefined;

  // Each function gets what its row says it uses. Its role allows what its bundle calls (below).
  const grants: Record<Use, Grant> = {
    table: { environment: { TABLE_NAME: table.tableName }, permissions: [], copyFiles: [] },
    bucket: { environment: { BUCKET_NAME: outputs.bucketName }, permissions: [], copyFiles: [] },
    // x402 settings (pay-to address, network, asset, facilitator) come from the deploying shell.
    x402: { environment: x402Environment(), permissions: [], copyFiles: [] },
    mail: {
      environment: mail ? { SIGNUP_VERIFICATION: "on", MAIL_FROM: mail.from, VERIFY_EMAIL_TEMPLATE: template } : { SIGNUP_VERIFICATION: "off" },
      permissions: [],
      copyFiles: [],
    },
    "auto-topup-offer": { environment: topUp ? { AUTO_TOPUP_ADDRESS: topUp.address } : {}, permissions: [], copyFiles: [] },
    "auto-topup-key": { environment: topUp ? { AUTO_TOPUP_PRIVATE_KEY: topUp.key } : {}, permissions: [], copyFiles: [] },
    "auto-topup-launch": {
      get environment(): Record<string, string> {
        return { AUTO_TOPUP_FUNCTION: worker!.functionName };
      },
      permissions: [],
      copyFiles: [],
    },
    "jobs-queue": { environment: { JOBS_QUEUE_URL: queues.jobs.queueUrl }, permissions: [], copyFiles: [] },
    "webhooks-queue": { environment: { WEBHOOKS_QUEUE_URL: queues.webhooks.queueUrl }, permissions: [], copyFiles: [] },
    secrets: { environment: { SECRETS_KEY_ID: secrets.keyArn }, permissions: [], copyFiles: [] },
    "dashboard-files": {
      environment: { DASHBOARD_DIR: copiedDir("dashboard") },
      permissions: [],
      copyFiles: COPIED_FILES.dashboard.map((file) => ({ ...file })),
    },
  };
  // A rendering function: the Chromium, fonts and filter-lists layers, and autoconsent's files next to the handler.
  const browser: Grant = {
    environment: {
      CHROMIUM_BIN_DIR: LAYER_MOUNTS.chromium,
      // Unpacking Chromium starts before the function's code loads (lib/render/packaging/chromium-boot.ts).
      NODE_OPTIONS: `--import=${LAYER_MOUNTS.chromium}/${CHROMIUM_BOOT_FILE}`,
      FONTS_DIR: LAYER_MOUNTS.fonts,
      FILTER_LISTS_DIR: LAYER_MOUNTS.filterLists,
      AUTOCONSENT_DIR: copiedDir("autoconsent"),
    },
    permissions: [],
    copyFiles: [...COPIED_FILES.autoconsent, ...COPIED_FILES.sharp].map((file) => ({ ...file })),
  };

  // Least privilege both ways: once a function is built, its role is granted the DynamoDB, S3 and
  // SES actions its bundle can call (stacks/bundles.ts), on the stack's table, bucket and mail alone.
  // A row that uses one of them and calls nothing of it, or the reverse, fails the build.
  const functions: Record<string, Fn> = {};
  const grantCalls = (row: FunctionRow) => async (_props: FunctionProps, out: string) => {
    const { dynamodb, s3, ses, lambda, sqs, kms } = awsActionsOf(out);
    // Which queue a bundle sends to is not in its commands: the rows' queues together answer for SQS.
    const queuesUsed = (Object.keys(queues) as Consumer["queue"][]).filter((name) => row.uses.includes(`${name}-queue`));
    for (const [use, actions, used] of [
      ["table", dynamodb, row.uses.includes("table")],
      ["bucket", s3, row.uses.includes("bucket")],
      ["mail", ses, row.uses.includes("mail")],
      ["auto-topup-launch", lambda, row.uses.includes("auto-topup-launch")],
      ["queues", sqs, queuesUsed.length > 0],
      ["secrets", kms, row.uses.includes("secrets")],
    ] as const)
      if (used !== actions.length > 0)
        throw new Error(`functions/${row.id} calls [${actions.join(", ")}] of the ${use}, and its row in lib/routes.ts ${used ? "uses" : "does not use"} it`);
    functions[row.id]!.attachPermissions([
      ...(dynamodb.length ? [new PolicyStatement({ actions: dynamodb, resources: [table.tableArn] })] : []),
      // Object actions on the objects; listing (what a HEAD of a missing key needs to answer 404) on the bucket.
      ...(s3.some((a) => !BUCKET_ACTIONS.has(a))
        ? [new PolicyStatement({ actions: s3.filter((a) => !BUCKET_ACTIONS.has(a)), resources: [`${outputs.bucketArn}/*`] })]
        : []),
      ...(s3.some((a) => BUCKET_ACTIONS.has(a))
        ? [new PolicyStatement({ actions: s3.filter((a) => BUCKET_ACTIONS.has(a)), resources: [outputs.bucketArn] })]
        : []),
      ...(ses.length && mail ? [new PolicyStatement({ actions: ses, resources: mailResources })] : []),
      ...(lambda.length ? [new PolicyStatement({ actions: lambda, resources: [worker!.functionArn] })] : []),
      ...(sqs.length ? [new PolicyStatement({ actions: sqs, resources: queuesUsed.map((name) => queues[name].queueArn) })] : []),
      ...(kms.length ? [new PolicyStatement({ actions: kms, resources: [secrets.keyArn] })] : []),
    ]);
  };

  const functionFor = (row: FunctionRow & { cap?: Cap | null }): FunctionProps => {
    const granted = [...row.uses.map((use) => grants[use]), ...(row.browser ? [browser] : [])];
    const copyFiles = granted.flatMap((grant) => grant.copyFiles);
    return {
      handler: `functions/${row.id}.handler`,
      runtime: "nodejs24.x",
      architecture: "x86_64",
      memorySize: row.memoryMB,
      timeout: row.timeoutSeconds,
      // sharp is copied in (COPIED_FILES): left external, and not installed by SST (which would fetch an old sharp).
      // woff2-encoder decodes fonts only where the fonts layer is not (a build, a local render): never
      // loaded on Lambda, so left out of every bundle (its WebAssembly would add ~300 KB to each).
      // Split: code behind a dynamic import (x402's libraries, the filter engine, puppeteer's WebDriver
      // BiDi) is its own file, compiled only when used, not at every cold start (docs/design.md).
      // No source maps: nothing reads them at run time (no --enable-source-maps), and they were 12 MiB
      // of each rendering function's share of Lambda's 250 MiB.
      nodejs: {
        format: "esm",
        minify: true,
        sourcemap: false,
        splitting: true,
        esbuild: { external: ["sharp", "woff2-encoder"], plugins: [leanDynamoDbDocuments, chromeHarVersion] },
      },
      hooks: { afterBuild: grantCalls(row) },
      environment: Object.assign(
        // The operator's domain (stacks/Cdn.ts) is a host the service answers on (PUBLIC_HOSTS: /mcp checks it).
        {
          STAGE: app.stage,
          SHOTLINE_VERSION: packageVersion(),
          EDGE_SECRET: edgeSecret.secretValue.unsafeUnwrap(),
          ...(process.env.SHOTLINE_DOMAIN ? { PUBLIC_HOSTS: process.env.SHOTLINE_DOMAIN } : {}),
          // The page the crawler's User-Agent names (docs/crawl.md): the operator's own, or the reference page on their domain.
          ...crawlerInfo(),
        },
        ...granted.map((grant) => grant.environment),
      ),
      permissions: granted.flatMap((grant) => grant.permissions),
      ...(copyFiles.length ? { copyFiles } : {}),
      logRetention: isDevelopmentStage(app.stage) ? "one_week" : "three_months",
      ...(row.cap && reserveConcurrency() ? { reservedConcurrentExecutions: row.cap.concurrency } : {}),
      // Chromium unpacks ~200 MB into /tmp at cold start.
      ...(row.browser ? { layers: [layers.chromium, layers.fonts, layers.filterLists], diskSize: 1024 } : {}),
    };
  };

  for (const row of workers) functions[row.id] = new DeployedFunction(stack, `Worker-${row.id}`, functionFor(row));
  worker = functions["auto-topup"];
  // Queue consumers: at most `concurrency` at once (reserved, and the event source's own cap), one message a call.
  for (const row of consumers) {
    const fn = new DeployedFunction(stack, `Consumer-${row.id}`, {
      ...functionFor(row),
      ...(reserveConcurrency() ? { reservedConcurrentExecutions: row.concurrency } : {}),
    });
    fn.addEventSource(new SqsEventSource(queues[row.queue], { batchSize: 1, reportBatchItemFailures: true, maxConcurrency: row.concurrency }));
    functions[row.id] = fn;
  }

  const api = new HttpApi(stack, "Api", {
    routes: {
      ...Object.fromEntries(httpRoutes.map((route) => [`${route.method} ${route.path}`, { function: functionFor(route) }])),
      $default: { function: functionFor(fallbackRoute) },
    },
  });

  // Free routes' throttling at the gateway (their caps, lib/routes.ts), set on the default stage once
  // every route exists (CloudFormation refuses settings for a route key it has not created yet).
  const stage = api.cdk.httpApi.defaultStage?.node.defaultChild as CfnStage;
  stage.routeSettings = Object.fromEntries(
    [...httpRoutes.map((route) => [`${route.method} ${route.path}`, route.cap] as const), ["$default", fallbackRoute.cap] as const].flatMap(([key, cap]) =>
      cap ? [[key, { ThrottlingRateLimit: cap.rate, ThrottlingBurstLimit: cap.burst }]] : [],
    ),
  );
  for (const route of api.node.findAll()) if (route instanceof CfnRoute) stage.addDependency(route);

  // Scheduled functions (the reconciler): packaged like the routes' functions.
  const scheduled = Object.fromEntries(
    schedules.map(
      (row) => [row.id, new Cron(stack, `Schedule-${row.id}`, { schedule: row.schedule, job: { function: functionFor(row) } }).jobFunction] as const,
    ),
  );
  // Every function by its row's id, for its grants (above) and the alarms (stacks/Monitoring.ts).
  Object.assign(functions, scheduled, { fallback: api.getFunction("$default")! });
  for (const route of httpRoutes) functions[route.id] = api.getFunction(`${route.method} ${route.path}`)!;

  stack.addOutputs({
    ApiUrl: api.url,
    ...Object.fromEntries(Object.entries(deadLetters).map(([name, queue]) => [`${name}DeadLetterQueue`, queue.queueUrl])),
  });
  return { api, functions, edgeSecret, deadLetters };
}
