import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import type { FunctionProps } from "sst/constructs";

// What a function's bundle may call of AWS, read from the bundle itself: stacks/Api.ts grants each
// function's role exactly these actions, on the stack's own table, bucket and mail (docs/deploy.md,
// "Permissions"). A call the code adds is granted with it; one it drops is no longer allowed.

type Service = "dynamodb" | "s3" | "ses" | "lambda" | "sqs" | "kms";

/** DynamoDB, S3, SES, Lambda, SQS and KMS operations our code sends, and the IAM actions each needs. */
const ACTIONS: Readonly<Record<string, { readonly service: Service; readonly actions: readonly string[] }>> = {
  GetItem: { service: "dynamodb", actions: ["dynamodb:GetItem"] },
  PutItem: { service: "dynamodb", actions: ["dynamodb:PutItem"] },
  UpdateItem: { service: "dynamodb", actions: ["dynamodb:UpdateItem"] },
  DeleteItem: { service: "dynamodb", actions: ["dynamodb:DeleteItem"] },
  Query: { service: "dynamodb", actions: ["dynamodb:Query"] },
  Scan: { service: "dynamodb", actions: ["dynamodb:Scan"] },
  BatchWriteItem: { service: "dynamodb", actions: ["dynamodb:BatchWriteItem"] },
  BatchGetItem: { service: "dynamodb", actions: ["dynamodb:BatchGetItem"] },
  // IAM checks each item of a transaction as its own action: lib/billing's transactions put, update,
  // delete and condition-check items (auto-topup's payer binding: lib/billing/auto-topup.ts).
  TransactWriteItems: {
    service: "dynamodb",
    actions: ["dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:ConditionCheckItem"],
  },
  GetObject: { service: "s3", actions: ["s3:GetObject"] },
  // Without s3:ListBucket (on the bucket itself), S3 answers a HEAD of a missing key 403, not 404.
  HeadObject: { service: "s3", actions: ["s3:GetObject", "s3:ListBucket"] },
  PutObject: { service: "s3", actions: ["s3:PutObject"] },
  // A crawl's whole result, written in parts (lib/crawl/result.ts).
  CreateMultipartUpload: { service: "s3", actions: ["s3:PutObject"] },
  UploadPart: { service: "s3", actions: ["s3:PutObject"] },
  CompleteMultipartUpload: { service: "s3", actions: ["s3:PutObject"] },
  AbortMultipartUpload: { service: "s3", actions: ["s3:AbortMultipartUpload"] },
  // A monitor's baseline kept with a check (lib/monitors/check.ts): read from one key, written to another.
  CopyObject: { service: "s3", actions: ["s3:GetObject", "s3:PutObject"] },
  // A replaced baseline, a deleted monitor's.
  DeleteObjects: { service: "s3", actions: ["s3:DeleteObject"] },
  // SES v2's SendEmail (a verification mail, with a template: lib/billing/mail.ts).
  SendEmail: { service: "ses", actions: ["ses:SendEmail"] },
  // An asynchronous invocation of the auto-topup worker (lib/payments/auto-topup-launch.ts).
  Invoke: { service: "lambda", actions: ["lambda:InvokeFunction"] },
  // A job's items and its webhooks' attempts, sent to the jobs queue (lib/jobs/queue.ts).
  SendMessageBatch: { service: "sqs", actions: ["sqs:SendMessage"] },
  SendMessage: { service: "sqs", actions: ["sqs:SendMessage"] },
  // Secrets at rest (lib/storage/sealed.ts): a data key made to seal them, and one opened to read them.
  GenerateDataKey: { service: "kms", actions: ["kms:GenerateDataKey"] },
  Decrypt: { service: "kms", actions: ["kms:Decrypt"] },
};

/**
 * Commands a bundle holds that never reach our table or bucket: the SDK clients' own (endpoint
 * discovery, which DynamoDB leaves off; S3 Express sessions, for directory buckets only), the
 * credential chain's (STS, SSO: on Lambda the credentials come from the environment), and
 * @aws-sdk/lib-dynamodb's wrappers, each of which holds the client command it sends.
 */
const NOT_OURS = new Set([
  "",
  "DescribeEndpoints",
  "CreateSession",
  "AssumeRole",
  "AssumeRoleWithWebIdentity",
  "GetRoleCredentials",
  "CreateToken",
  "CreateOAuth2Token",
  "CreateOAuth2TokenWithIAM",
  "DynamoDBDocumentClient",
  "Get",
  "Put",
  "Update",
  "Delete",
  "TransactWrite",
  "BatchWrite",
  "BatchGet",
]);

/** A command class as the bundle names it: SST bundles with esbuild's keepNames, which keeps `class GetItemCommand` as `x(this,"GetItemCommand")`. */
const COMMAND = /\(this, ?"(\w*)Command"\)/g;
/** The SDK clients' service ids, present in any bundle that holds the client. */
const CLIENTS: Readonly<Record<Service, string>> = {
  dynamodb: '"DynamoDB_20120810"',
  s3: '"AmazonS3"',
  ses: '"SimpleEmailService_v2"',
  lambda: '"AWSGirApiService"',
  sqs: '"AmazonSQS"',
  kms: '"TrentService"',
};

/** The code files of a built function (its own, not the packages copied beside it: sharp). */
function codeFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : codeFiles(file);
    return /\.m?js$/.test(entry.name) ? [file] : [];
  });
}

/** The IAM actions a built function (its folder) may need, by service, sorted; throws on a command this file does not know. */
export function awsActionsOf(dir: string): Record<Service, string[]> {
  const found: Record<Service, Set<string>> = { dynamodb: new Set(), s3: new Set(), ses: new Set(), lambda: new Set(), sqs: new Set(), kms: new Set() };
  const clients = new Set<string>();
  for (const file of codeFiles(dir)) {
    const code = readFileSync(file, "utf8");
    for (const [service, id] of Object.entries(CLIENTS)) if (code.includes(id)) clients.add(service);
    for (const [, name] of code.matchAll(COMMAND)) {
      if (NOT_OURS.has(name!)) continue;
      const known = ACTIONS[name!];
      if (!known) throw new Error(`${dir} holds the AWS command ${name}Command: say in stacks/bundles.ts which IAM actions it needs`);
      for (const action of known.actions) found[known.service].add(action);
    }
  }
  // A client without a command found would be a bundle this reading no longer understands: an empty grant would fail only on AWS.
  for (const service of clients) if (!found[service as Service].size) throw new Error(`${dir} holds the ${service} client but no command this file can read`);
  return Object.fromEntries(Object.entries(found).map(([service, actions]) => [service, [...actions].sort()])) as Record<Service, string[]>;
}

/**
 * @aws-sdk/lib-dynamodb does not declare itself free of side effects (the SDK's clients do), so its
 * paginators, made by calls at the top of their modules, kept QueryCommand and ScanCommand in every
 * bundle that reads the table. Its modules have none but those: marked so, what is not used is left out.
 */
/** An esbuild plugin as SST's own esbuild takes it. */
type Plugin = NonNullable<NonNullable<NonNullable<FunctionProps["nodejs"]>["esbuild"]>["plugins"]>[number];

export const leanDynamoDbDocuments: Plugin = {
  name: "lean-dynamodb-documents",
  setup(build) {
    const again = Symbol("resolving");
    build.onResolve({ filter: /^(\.|@aws-sdk\/lib-dynamodb)/ }, async (args) => {
      if (args.pluginData === again) return undefined;
      const ours = args.path.startsWith("@aws-sdk/lib-dynamodb") || args.importer.includes(`${path.sep}@aws-sdk${path.sep}lib-dynamodb${path.sep}`);
      if (!ours) return undefined;
      const resolved = await build.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: again });
      return resolved.errors.length ? undefined : { path: resolved.path, sideEffects: false };
    });
  },
};

/** What chrome-har 1.3.1 runs at load to read its own version: the package.json beside it, which a bundle has not. */
const CHROME_HAR_VERSION_READ = "require('./package.json').version";

/**
 * chrome-har (lib/render/page-log.ts) reads its version from the package.json beside its module
 * when it loads, which fails in a bundle ("Cannot find module './package.json'"): the version is
 * written into the bundle instead. An upgrade that reads it otherwise fails the build, not a render.
 */
export const chromeHarVersion: Plugin = {
  name: "chrome-har-version",
  setup(build) {
    build.onLoad({ filter: /[\\/]chrome-har[\\/]index\.js$/ }, (args) => {
      const source = readFileSync(args.path, "utf8");
      if (!source.includes(CHROME_HAR_VERSION_READ))
        throw new Error(`chrome-har no longer reads its version with ${CHROME_HAR_VERSION_READ}: check stacks/bundles.ts`);
      const { version } = JSON.parse(readFileSync(path.join(path.dirname(args.path), "package.json"), "utf8")) as { version: string };
      return { contents: source.replace(CHROME_HAR_VERSION_READ, JSON.stringify(version)), loader: "js" };
    });
  },
};
