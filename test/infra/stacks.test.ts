// Synthesizes the real SST v2 app offline (functions are bundled with esbuild as `sst deploy` does)
// and asserts the CloudFormation it would deploy. AWS itself cannot run here; this is the closest check.

import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { Match, Template } from "aws-cdk-lib/assertions";
import { getStack } from "sst/constructs";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { artifactOf, deploymentSize, invokeBundle, lambdaEnvironment, synthesize } from "../../dev/harness/bundle.js";
import { writingSystems } from "../../dev/harness/writing-systems.js";
import { VERIFY_MAIL } from "../../lib/billing/verify-mail.js";
import {
  CACHE_PREFIX,
  CACHE_RETENTION_DAYS,
  CHROMIUM_BOOT_FILE,
  COPIED_FILES,
  JOB_MAX_RECEIVES,
  JOB_RETENTION_DAYS,
  JOBS_PREFIX,
  LAYER_MOUNTS,
  MONITOR_CHECKS_PREFIX,
  MONITOR_HISTORY_DAYS,
  OUTPUT_RETENTION_DAYS,
} from "../../lib/packaging.js";
import { FONT_CACHE_DIR, fontSet } from "../../lib/render/packaging/fonts.js";
import { consumers, httpRoutes, routes, schedules, workers } from "../../lib/routes.js";
import { Api, mailSettings } from "../../stacks/Api.js";
import { awsActionsOf } from "../../stacks/bundles.js";
import { CDN_MAX_TTL_SECONDS, Cdn } from "../../stacks/Cdn.js";
import { Layers } from "../../stacks/Layers.js";
import { Monitoring } from "../../stacks/Monitoring.js";
import { Storage } from "../../stacks/Storage.js";
import { readImage } from "../helpers/image.js";
import { inkBand, textProblems, textRowsHtml } from "../helpers/ink.js";

let storage: Template;
let api: Template;
let layers: Template;
let cdn: Template;
let monitoring: Template;
let outdir: string;

afterAll(() => rmSync(outdir, { recursive: true, force: true }));

beforeAll(async () => {
  // The cloud assembly (with copies of the layers, ~170 MB) goes to a folder removed after the tests.
  outdir = await synthesize();
  storage = Template.fromStack(getStack(Storage));
  api = Template.fromStack(getStack(Api));
  layers = Template.fromStack(getStack(Layers));
  cdn = Template.fromStack(getStack(Cdn));
  monitoring = Template.fromStack(getStack(Monitoring));
}, 300_000);

type Resource = { Properties: Record<string, unknown> };
/** Every deployed function's row: the routes' and the schedules'. */
const allRows = [...routes, ...schedules, ...workers, ...consumers];
const fn = (handler: string) => {
  const all = api.findResources("AWS::Lambda::Function", { Properties: { Handler: handler } }) as Record<string, Resource>;
  const entries = Object.values(all);
  expect(entries, `one Lambda with handler ${handler}`).toHaveLength(1);
  return entries[0]!.Properties;
};

describe("Storage stack", () => {
  it("has one on-demand table keyed pk/sk with TTL and point-in-time recovery", () => {
    storage.resourceCountIs("AWS::DynamoDB::Table", 1);
    storage.hasResourceProperties("AWS::DynamoDB::Table", {
      BillingMode: "PAY_PER_REQUEST",
      KeySchema: [
        { AttributeName: "pk", KeyType: "HASH" },
        { AttributeName: "sk", KeyType: "RANGE" },
      ],
      TimeToLiveSpecification: { AttributeName: "expiresAt", Enabled: true },
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
    });
  });

  it("has an encrypted, private output bucket whose objects expire: outputs and kept answers after a day, cached renders a day after their class", () => {
    storage.hasResourceProperties("AWS::S3::Bucket", {
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: "AES256" } }] },
      LifecycleConfiguration: {
        Rules: [
          Match.objectLike({ Status: "Enabled", Prefix: "outputs/", ExpirationInDays: OUTPUT_RETENTION_DAYS }),
          Match.objectLike({ Status: "Enabled", Prefix: "answers/", ExpirationInDays: OUTPUT_RETENTION_DAYS }),
          Match.objectLike({
            Status: "Enabled",
            Prefix: JOBS_PREFIX,
            ExpirationInDays: JOB_RETENTION_DAYS,
            AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
          }),
          // A monitor's checks' images; its baseline (monitor-baselines/) has no rule: it is kept while the monitor is.
          Match.objectLike({ Status: "Enabled", Prefix: MONITOR_CHECKS_PREFIX, ExpirationInDays: MONITOR_HISTORY_DAYS }),
          ...CACHE_RETENTION_DAYS.map((days) => Match.objectLike({ Status: "Enabled", Prefix: `${CACHE_PREFIX}d${days}/`, ExpirationInDays: days + 1 })),
        ],
      },
    });
  });
});

describe("Api stack", () => {
  it("routes every row of the route table, plus $default for 404/405", () => {
    const keys = Object.values(api.findResources("AWS::ApiGatewayV2::Route")).map((r) => (r as Resource).Properties.RouteKey);
    expect(keys.sort()).toEqual([...httpRoutes.map((r) => `${r.method} ${r.path}`), "$default"].sort());
    // What agents look for first (docs/agents.md).
    for (const key of ["GET /.well-known/x402.json", "GET /llms.txt", "GET /openapi.json", "GET /docs", "POST /mcp"]) expect(keys).toContain(key);
  });

  it("gives each row its own Node.js 24 Lambda with the row's memory and timeout", () => {
    for (const route of routes) {
      const props = fn(`functions/${route.id}.handler`);
      expect(props.Runtime, route.id).toBe("nodejs24.x");
      expect(props.MemorySize, route.id).toBe(route.memoryMB);
      expect(props.Timeout, route.id).toBe(route.timeoutSeconds);
    }
  });

  it("runs the reconciler every minute, with the table and x402's settings (to confirm settlements on chain), and not the bucket", () => {
    const props = fn("functions/reconcile.handler");
    expect(props.Runtime).toBe("nodejs24.x");
    expect((props.Environment as { Variables: Record<string, unknown> }).Variables).toHaveProperty("TABLE_NAME");
    expect((props.Environment as { Variables: Record<string, unknown> }).Variables).toHaveProperty("X402_PAY_TO");
    expect((props.Environment as { Variables: Record<string, unknown> }).Variables).not.toHaveProperty("BUCKET_NAME");
    const rules = Object.values(api.findResources("AWS::Events::Rule")) as Resource[];
    // The reconciler's, and the monitors' schedule's: each a rule of its own, every minute.
    expect(rules.map((rule) => rule.Properties.ScheduleExpression)).toEqual(["rate(1 minute)", "rate(1 minute)"]);
    for (const handler of ["functions/reconcile.handler", "functions/monitors-schedule.handler"]) {
      const [target] = Object.entries(api.findResources("AWS::Lambda::Function", { Properties: { Handler: handler } }));
      expect(
        rules.filter((rule) => JSON.stringify(rule.Properties.Targets).includes(target![0])),
        handler,
      ).toHaveLength(1);
    }
  });

  it("caps every free route (reserved concurrency and gateway throttling) so it cannot starve paid renders; priced routes are uncapped", () => {
    let reserved = 0;
    for (const route of routes) {
      const props = fn(`functions/${route.id}.handler`);
      if (route.price) {
        expect(route.cap, route.id).toBeNull();
        expect(props.ReservedConcurrentExecutions, route.id).toBeUndefined();
      } else {
        expect(route.cap, route.id).not.toBeNull();
        expect(props.ReservedConcurrentExecutions, route.id).toBe(route.cap!.concurrency);
        reserved += route.cap!.concurrency;
      }
    }
    // Lambda keeps 100 of an account's concurrency unreserved; the default quota is 1,000: the rest is the renders'.
    expect(reserved).toBeLessThanOrEqual(100);
    expect(fn("functions/metadata.handler").ReservedConcurrentExecutions).toBe(10);
    // The jobs routes are limited per key in the function: the gateway's route-wide throttling must
    // not be met by a few dozen strangers' requests a second (it would answer 429 to every customer).
    for (const id of ["jobs-create", "jobs-get", "jobs-list", "jobs-cancel"] as const) {
      const route = httpRoutes.find((r) => r.id === id)!;
      expect(route.limits, id).toContain("caller");
      expect(route.cap!.rate, id).toBeGreaterThanOrEqual(50);
    }
    const [stage] = Object.values(api.findResources("AWS::ApiGatewayV2::Stage")) as (Resource & { DependsOn?: string[] })[];
    const settings = stage!.Properties.RouteSettings as Record<string, { ThrottlingRateLimit: number; ThrottlingBurstLimit: number }>;
    const free = routes.filter((route) => !route.price);
    expect(Object.keys(settings).sort()).toEqual(free.map((route) => (route.method ? `${route.method} ${route.path}` : "$default")).sort());
    for (const route of free) {
      expect(settings[route.method ? `${route.method} ${route.path}` : "$default"]).toEqual({
        ThrottlingRateLimit: route.cap!.rate,
        ThrottlingBurstLimit: route.cap!.burst,
      });
    }
    // The stage is created after its routes (CloudFormation refuses settings for a route it does not know yet).
    expect(stage!.DependsOn).toHaveLength(routes.length);
  });

  it("keeps render functions within API Gateway's 30 s and with enough memory for Chromium", () => {
    for (const route of routes.filter((r) => r.browser)) {
      expect(route.timeoutSeconds).toBeLessThanOrEqual(30);
      expect(route.memoryMB).toBeGreaterThanOrEqual(1536);
    }
    expect(fn("functions/screenshot.handler").MemorySize).toBeGreaterThanOrEqual(2048);
  });

  it("allows each function's role exactly the AWS calls its bundle can make, on the stack's own table and bucket", () => {
    type Statement = { Action: string | string[]; Resource: unknown; Effect: string };
    const policies = Object.values(api.findResources("AWS::IAM::Policy")) as Resource[];
    const functions = api.findResources("AWS::Lambda::Function") as Record<string, Resource>;
    // A function's role, by its handler, and the statements of the policies attached to that role.
    const statementsOf = (id: string): Statement[] => {
      const role = JSON.stringify(fn(`functions/${id}.handler`).Role);
      const roleName = (JSON.parse(role) as { "Fn::GetAtt": [string] })["Fn::GetAtt"][0];
      return policies
        .filter((p) => JSON.stringify(p.Properties.Roles).includes(`"${roleName}"`))
        .flatMap((p) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
    };
    expect(Object.keys(functions).length).toBeGreaterThanOrEqual(allRows.length);
    const granted: Record<string, string[]> = {};
    for (const row of allRows) {
      const calls = awsActionsOf(artifactOf(row.id));
      const statements = statementsOf(row.id).filter((s) => [s.Action].flat().some((a) => /^(dynamodb|s3):/.test(a)));
      const on = (resource: RegExp) =>
        statements
          .filter((s) => resource.test(JSON.stringify(s.Resource)))
          .flatMap((s) => [s.Action].flat())
          .sort();
      // Nothing but the table and the bucket's objects, and on each exactly what the bundle calls.
      // Listing only on the bucket itself (a HEAD of a missing key answers 404 with it, 403 without).
      for (const statement of statements)
        expect(JSON.stringify(statement.Resource), `${row.id} scoped`).toMatch(
          [statement.Action].flat().includes("s3:ListBucket")
            ? /^\{"Fn::ImportValue":"[\w-]+:\w*OutputsBucket\w*Arn\w*"\}$/
            : /LedgerTable.*Arn|OutputsBucket.*Arn.*\/\*/,
        );
      expect(on(/LedgerTable/), `${row.id}: the table`).toEqual(calls.dynamodb);
      expect(on(/OutputsBucket/), `${row.id}: the bucket`).toEqual(calls.s3);
      expect(row.uses.includes("table"), `${row.id} uses the table`).toBe(calls.dynamodb.length > 0);
      granted[row.id] = [...calls.dynamodb, ...calls.s3];
    }
    // What the reading of the bundles found, checked against what the code does: a route that touches
    // nothing holds no SDK client at all, and no route but the ones that need it can delete an item.
    for (const id of ["health", "docs", "openapi", "llms-txt", "dashboard", "x402-manifest", "fallback"]) {
      expect(granted[id], id).toEqual([]);
      const code = readdirSync(path.join(artifactOf(id), "functions")).map((f) => readFileSync(path.join(artifactOf(id), "functions", f), "utf8"));
      expect(
        code.some((c) => c.includes("DynamoDB_20120810") || c.includes('"AmazonS3"')),
        `${id} holds an AWS client`,
      ).toBe(false);
    }
    // A key route reads its key and account, counts its limits, notes the key's use (and lists a key
    // made before keys were listed: lib/billing/api-keys.ts); it never deletes, nor touches the bucket.
    const keyRoute = ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"];
    expect(granted.metadata).toEqual(keyRoute);
    expect(granted.usage).toEqual([...keyRoute, "dynamodb:Query"].sort());
    // A pull launched in process (npm run dev) checks its payer's binding in its claim's transaction.
    expect(granted.screenshot).toEqual(["dynamodb:ConditionCheckItem", "dynamodb:DeleteItem", ...keyRoute, "s3:GetObject", "s3:PutObject"]);
    expect(granted.output).toEqual(["s3:GetObject", "s3:ListBucket"]);
    expect(granted.reconcile).toEqual([
      "dynamodb:ConditionCheckItem",
      "dynamodb:DeleteItem",
      "dynamodb:GetItem",
      "dynamodb:PutItem",
      "dynamodb:Query",
      "dynamodb:UpdateItem",
    ]);
  });

  it("mails signup verification through SES: the template from lib/billing/verify-mail.ts, sent by signup alone, from the configured sender", () => {
    api.hasResourceProperties("AWS::SES::Template", {
      Template: { TemplateName: "shotline-test-verify-email", SubjectPart: VERIFY_MAIL.subject, TextPart: VERIFY_MAIL.text, HtmlPart: VERIFY_MAIL.html },
    });
    const env = (fn("functions/signup.handler").Environment as { Variables: Record<string, unknown> }).Variables;
    expect(env).toMatchObject({ SIGNUP_VERIFICATION: "on", MAIL_FROM: "signup@example.com", VERIFY_EMAIL_TEMPLATE: "shotline-test-verify-email" });
    // Only signup's role may send, and only from the sender's address or domain, with that template.
    const statements = (Object.values(api.findResources("AWS::IAM::Policy")) as Resource[]).flatMap((p) =>
      (p.Properties.PolicyDocument as { Statement: { Action: string | string[]; Resource: unknown }[] }).Statement.filter((s) =>
        [s.Action].flat().some((a) => a.startsWith("ses:")),
      ).map((s) => ({ roles: JSON.stringify(p.Properties.Roles), ...s })),
    );
    expect(statements).toHaveLength(1);
    expect(statements[0]!.roles).toContain((fn("functions/signup.handler").Role as { "Fn::GetAtt": [string] })["Fn::GetAtt"][0]);
    expect(statements[0]!.Action).toBe("ses:SendEmail");
    const resources = JSON.stringify(statements[0]!.Resource);
    for (const resource of [":identity/signup@example.com", ":identity/example.com", ":template/shotline-test-verify-email"])
      expect(resources).toContain(resource);
    expect(resources).not.toContain("*");
  });

  it("seals secrets with a KMS key of the stack's own, rotated yearly: only the functions that seal or open them may use it, and only it", () => {
    storage.hasResourceProperties("AWS::KMS::Key", { EnableKeyRotation: true });
    // Its ARN is an output: an operator's migration (npm run admin -- seal-monitors) is given it.
    storage.hasOutput("SecretsKeyArn", {});
    expect(Object.keys(storage.findResources("AWS::KMS::Key"))).toHaveLength(1);
    const statements = (Object.values(api.findResources("AWS::IAM::Policy")) as Resource[]).flatMap((p) =>
      (p.Properties.PolicyDocument as { Statement: { Action: string | string[]; Resource: unknown }[] }).Statement.filter((st) =>
        [st.Action].flat().some((a) => a.startsWith("kms:")),
      ).map((st) => ({ roles: JSON.stringify(p.Properties.Roles), actions: [st.Action].flat().sort(), resource: JSON.stringify(st.Resource) })),
    );
    const roleOf = (id: string) => (fn(`functions/${id}.handler`).Role as { "Fn::GetAtt": [string] })["Fn::GetAtt"][0];
    // Who keeps secrets (a job's items, a monitor: made through the API or MCP, changed) and who opens them (the worker).
    const keepers = ["jobs-create", "job-worker", "monitors-create", "monitors-update", "crawl-create", "mcp"];
    expect(statements.map((st) => keepers.find((id) => st.roles.includes(roleOf(id)))).sort()).toEqual([...keepers].sort());
    for (const st of statements) {
      expect(st.actions).toEqual(["kms:Decrypt", "kms:GenerateDataKey"]);
      expect(st.resource).toMatch(/Secrets[0-9A-F]{8}.*Arn/);
      expect(st.resource).not.toContain("*");
    }
    for (const id of keepers)
      expect(JSON.stringify((fn(`functions/${id}.handler`).Environment as { Variables: Record<string, unknown> }).Variables.SECRETS_KEY_ID)).toMatch(/Secrets/);
    // A function that keeps none is not told the key.
    expect((fn("functions/monitors-get.handler").Environment as { Variables: Record<string, unknown> }).Variables.SECRETS_KEY_ID).toBeUndefined();
  });

  it("feeds each consumer (job items, webhook attempts) from its own SQS queue with a dead-letter queue, reporting partial failures, capped so jobs cannot starve requests", () => {
    const queues = Object.entries(api.findResources("AWS::SQS::Queue")) as [string, Resource][];
    expect(queues).toHaveLength(2 * consumers.length);
    const mappings = Object.values(api.findResources("AWS::Lambda::EventSourceMapping")) as Resource[];
    expect(mappings).toHaveLength(consumers.length);
    const logicalIdOf = (id: string) => {
      const [found] = Object.keys(api.findResources("AWS::Lambda::Function", { Properties: { Handler: `functions/${id}.handler` } }));
      return found!;
    };
    const queueIdOf: Record<string, string> = {};
    for (const row of consumers) {
      const name = `${row.queue[0]!.toUpperCase()}${row.queue.slice(1)}`;
      const [queueId, queue] = queues.find(([id, q]) => id.startsWith(name) && !id.startsWith(`${name}DeadLetters`) && q.Properties.RedrivePolicy)!;
      const [deadId, dead] = queues.find(([id]) => id.startsWith(`${name}DeadLetters`))!;
      queueIdOf[row.queue] = queueId;
      // A message comes back after six times its consumer's timeout; past JOB_MAX_RECEIVES it goes to the dead letters, kept 14 days.
      expect(queue.Properties, row.id).toMatchObject({ VisibilityTimeout: 6 * row.timeoutSeconds, RedrivePolicy: { maxReceiveCount: JOB_MAX_RECEIVES } });
      expect(JSON.stringify(queue.Properties.RedrivePolicy)).toContain(deadId);
      expect(dead.Properties.MessageRetentionPeriod).toBe(14 * 86_400);
      const props = fn(`functions/${row.id}.handler`);
      expect(props, row.id).toMatchObject({ Timeout: row.timeoutSeconds, MemorySize: row.memoryMB, ReservedConcurrentExecutions: row.concurrency });
      expect(props.Layers ?? [], row.id).toHaveLength(row.browser ? 3 : 0);
      const mapping = mappings.find((m) => JSON.stringify(m.Properties.FunctionName).includes(logicalIdOf(row.id)))!;
      expect(mapping.Properties, row.id).toMatchObject({
        BatchSize: 1,
        FunctionResponseTypes: ["ReportBatchItemFailures"],
        ScalingConfig: { MaximumConcurrency: row.concurrency },
      });
      expect(JSON.stringify(mapping.Properties.EventSourceArn), row.id).toContain(queueId);
    }
    expect(fn("functions/job-worker.handler").MemorySize).toBeGreaterThan(fn("functions/webhook-sender.handler").MemorySize as number);
    // Only what queues items or webhook attempts may send, and only to those queues: the route that
    // makes jobs, the worker (an account's next items, as one ends) and the reconciler (items a
    // feed missed) to the jobs queue; the route that cancels jobs (its completion webhook), the
    // worker (events), the sender (retries), the reconciler and the monitors' schedule (the events
    // of the items and checks they sweep) to the webhooks queue; the monitors' routes, their
    // schedule and the MCP server to the jobs queue.
    const sending = (Object.values(api.findResources("AWS::IAM::Policy")) as Resource[]).flatMap((p) =>
      (p.Properties.PolicyDocument as { Statement: { Action: string | string[]; Resource: unknown }[] }).Statement.filter((st) =>
        [st.Action].flat().includes("sqs:SendMessage"),
      ).map((st) => ({ roles: JSON.stringify(p.Properties.Roles), resource: JSON.stringify(st.Resource) })),
    );
    const roleOf = (id: string) => (fn(`functions/${id}.handler`).Role as { "Fn::GetAtt": [string] })["Fn::GetAtt"][0];
    const sends: Record<string, string[]> = {
      "jobs-create": ["jobs"],
      "jobs-cancel": ["webhooks"],
      "job-worker": ["jobs", "webhooks"],
      "webhook-sender": ["webhooks"],
      reconcile: ["jobs", "webhooks"],
      // A monitor's first check, one asked for now, the schedule's, and an agent's (MCP) all go
      // through the account's feed to the jobs queue.
      "monitors-create": ["jobs"],
      "monitors-check": ["jobs"],
      "monitors-schedule": ["jobs", "webhooks"],
      // A crawl's start goes through the account's feed too; a cancelled crawl's end queues the writing of its result.
      "crawl-create": ["jobs"],
      "crawl-cancel": ["jobs"],
      mcp: ["jobs"],
    };
    const senders = sending.map((st) => [Object.keys(sends).find((id) => st.roles.includes(roleOf(id))), st.resource] as const);
    expect(senders.map(([id]) => id).sort()).toEqual(Object.keys(sends).sort());
    for (const [id, resource] of senders) {
      const queues = sends[id!]!;
      for (const [queue, queueId] of Object.entries(queueIdOf)) expect(resource.includes(queueId), `${id} sends to ${queue}`).toBe(queues.includes(queue));
    }
    expect(JSON.stringify((fn("functions/jobs-create.handler").Environment as { Variables: unknown }).Variables)).toContain("JOBS_QUEUE_URL");
    expect(JSON.stringify((fn("functions/job-worker.handler").Environment as { Variables: unknown }).Variables)).toContain("WEBHOOKS_QUEUE_URL");
  });

  it("refuses to deploy verification without a sender, and deploys without verification when told to", () => {
    const saved = { from: process.env.SHOTLINE_MAIL_FROM, verification: process.env.SHOTLINE_SIGNUP_VERIFICATION };
    try {
      for (const from of [undefined, "", "not-an-address"]) {
        if (from === undefined) delete process.env.SHOTLINE_MAIL_FROM;
        else process.env.SHOTLINE_MAIL_FROM = from;
        expect(() => mailSettings(), String(from)).toThrow(/Set SHOTLINE_MAIL_FROM .* or deploy with SHOTLINE_SIGNUP_VERIFICATION=off/);
      }
      process.env.SHOTLINE_SIGNUP_VERIFICATION = "off";
      expect(mailSettings()).toBeNull();
    } finally {
      process.env.SHOTLINE_MAIL_FROM = saved.from;
      if (saved.verification === undefined) delete process.env.SHOTLINE_SIGNUP_VERIFICATION;
      else process.env.SHOTLINE_SIGNUP_VERIFICATION = saved.verification;
    }
  });

  it("launches auto-topup pulls by invoking the worker, which alone (with the permit route and the reconciler) holds the top-up key", () => {
    const env = (id: string) => (fn(`functions/${id}.handler`).Environment as { Variables: Record<string, unknown> }).Variables;
    const key = process.env.SHOTLINE_AUTO_TOPUP_PRIVATE_KEY;
    const holders = allRows.filter((row) => env(row.id).AUTO_TOPUP_PRIVATE_KEY !== undefined).map((row) => row.id);
    expect(holders.sort()).toEqual(["auto-topup", "auto-topup-set", "reconcile"]);
    for (const id of holders) expect(env(id).AUTO_TOPUP_PRIVATE_KEY).toBe(key);
    expect(env("auto-topup-get").AUTO_TOPUP_ADDRESS).toBe(privateKeyToAccount(key as `0x${string}`).address);
    // The functions that charge may invoke the worker (asynchronously), and nothing else of Lambda.
    const [workerId] = Object.keys(api.findResources("AWS::Lambda::Function", { Properties: { Handler: "functions/auto-topup.handler" } }));
    const invokers: string[] = [];
    for (const policy of Object.values(api.findResources("AWS::IAM::Policy")) as Resource[])
      for (const statement of (policy.Properties.PolicyDocument as { Statement: { Action: string | string[]; Resource: unknown }[] }).Statement)
        if ([statement.Action].flat().some((a) => a.startsWith("lambda:"))) {
          expect(statement.Action).toBe("lambda:InvokeFunction");
          expect(JSON.stringify(statement.Resource)).toContain(workerId);
          invokers.push(JSON.stringify(policy.Properties.Roles));
        }
    for (const id of ["screenshot", "html-to-screenshot", "signed-screenshot", "mcp", "auto-topup-set", "content", "animate", "map"]) {
      const role = (fn(`functions/${id}.handler`).Role as { "Fn::GetAtt": [string] })["Fn::GetAtt"][0];
      expect(
        invokers.some((roles) => roles.includes(role)),
        id,
      ).toBe(true);
      expect(env(id).AUTO_TOPUP_FUNCTION, id).toEqual({ Ref: workerId });
    }
    expect(invokers).toHaveLength(8);
  });

  it("passes the table and bucket names only to the functions that use them", () => {
    const env = (id: string) => (fn(`functions/${id}.handler`).Environment as { Variables: Record<string, unknown> }).Variables;
    expect(env("screenshot")).toHaveProperty("TABLE_NAME");
    expect(env("screenshot")).toHaveProperty("BUCKET_NAME");
    expect(env("health")).not.toHaveProperty("TABLE_NAME");
    expect(env("health").SHOTLINE_VERSION).toMatch(/^\d+\.\d+\.\d+/);
    expect(env("screenshot").X402_PAY_TO).toBe("0x000000000000000000000000000000000000bEEF");
    expect(env("topup").X402_PAY_TO).toBe("0x000000000000000000000000000000000000bEEF");
    expect(env("usage")).not.toHaveProperty("X402_PAY_TO");
    expect(env("dashboard").DASHBOARD_DIR).toBe("/var/task/dashboard");
    expect(env("health")).not.toHaveProperty("DASHBOARD_DIR");
  });

  it("copies the dashboard's files next to its handler, where DASHBOARD_DIR points", () => {
    const dir = artifactOf("dashboard");
    for (const file of ["index.html", "dashboard.css", "dashboard.js"]) expect(existsSync(path.join(dir, "dashboard", file)), file).toBe(true);
  });

  it("gives the rendering functions the Chromium, fonts and filter-lists layers, their locations, and autoconsent's files", () => {
    for (const route of routes) {
      const props = fn(`functions/${route.id}.handler`);
      const variables = (props.Environment as { Variables: Record<string, unknown> }).Variables;
      if (route.browser) {
        expect(props.Layers, route.id).toHaveLength(3);
        expect(variables).toMatchObject({
          CHROMIUM_BIN_DIR: LAYER_MOUNTS.chromium,
          FONTS_DIR: LAYER_MOUNTS.fonts,
          FILTER_LISTS_DIR: LAYER_MOUNTS.filterLists,
          AUTOCONSENT_DIR: "/var/task/autoconsent",
          NODE_OPTIONS: `--import=${LAYER_MOUNTS.chromium}/${CHROMIUM_BOOT_FILE}`,
        });
        expect((props.EphemeralStorage as { Size: number }).Size).toBeGreaterThanOrEqual(1024);
      } else {
        expect(props.Layers, route.id).toBeUndefined();
        expect(variables).not.toHaveProperty("CHROMIUM_BIN_DIR");
      }
    }
  });
});

describe("Cdn stack", () => {
  it("answers everything with HSTS, nosniff and no frames (a response headers policy on both behaviours)", () => {
    const policies = cdn.findResources("AWS::CloudFront::ResponseHeadersPolicy") as Record<string, Resource>;
    const [[policyId, policy]] = Object.entries(policies) as [[string, Resource]];
    expect((policy.Properties.ResponseHeadersPolicyConfig as { SecurityHeadersConfig: unknown }).SecurityHeadersConfig).toMatchObject({
      StrictTransportSecurity: { AccessControlMaxAgeSec: 63_072_000, Override: true },
      ContentTypeOptions: { Override: true },
      FrameOptions: { FrameOption: "DENY", Override: true },
    });
    const [distribution] = Object.values(cdn.findResources("AWS::CloudFront::Distribution")) as Resource[];
    const config = distribution!.Properties.DistributionConfig as {
      DefaultCacheBehavior: { ResponseHeadersPolicyId?: unknown };
      CacheBehaviors: { ResponseHeadersPolicyId?: unknown }[];
    };
    for (const behaviour of [config.DefaultCacheBehavior, ...config.CacheBehaviors]) expect(behaviour.ResponseHeadersPolicyId).toEqual({ Ref: policyId });
  });

  it("tells the API who the viewer is, provably: a secret origin header, and the viewer's address written at the edge on both behaviours", () => {
    const [distribution] = Object.values(cdn.findResources("AWS::CloudFront::Distribution")) as Resource[];
    const config = distribution!.Properties.DistributionConfig as {
      Origins: { OriginCustomHeaders?: { HeaderName: string; HeaderValue: unknown }[] }[];
      DefaultCacheBehavior: { FunctionAssociations?: { EventType: string }[] };
      CacheBehaviors: { FunctionAssociations?: { EventType: string }[]; OriginRequestPolicyId?: unknown }[];
    };
    // The secret: Secrets Manager's, the same value the functions get as EDGE_SECRET.
    const header = config.Origins.flatMap((o) => o.OriginCustomHeaders ?? []).find((h) => h.HeaderName === "x-shotline-edge");
    expect(JSON.stringify(header?.HeaderValue)).toMatch(/resolve:secretsmanager/);
    for (const behaviour of [config.DefaultCacheBehavior, ...config.CacheBehaviors])
      expect(behaviour.FunctionAssociations?.map((f) => f.EventType)).toEqual(["viewer-request"]);
    cdn.hasResourceProperties("AWS::CloudFront::Function", {
      FunctionCode: Match.stringLikeRegexp('headers\\["x-shotline-viewer-address"\\] = \\{ value: event\\.viewer\\.ip \\}'),
    });
    // The signed links' behaviour forwards the viewer's address (not part of its cache key).
    cdn.hasResourceProperties("AWS::CloudFront::OriginRequestPolicy", {
      OriginRequestPolicyConfig: Match.objectLike({
        HeadersConfig: { HeaderBehavior: "whitelist", Headers: ["x-shotline-viewer-address", "CloudFront-Viewer-Address"] },
      }),
    });
    expect(config.CacheBehaviors[0]!.OriginRequestPolicyId).toBeDefined();
    // Every function knows the secret.
    for (const f of (Object.values(api.findResources("AWS::Lambda::Function")) as Resource[]).filter((r) =>
      String(r.Properties.Handler).startsWith("functions/"),
    )) {
      const variables = (f.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(JSON.stringify(variables.EDGE_SECRET), String(f.Properties.Handler)).toMatch(/resolve:secretsmanager/);
    }
  });

  it("caches signed links at the edge by their full query for as long as the answer's max-age (a hit never reaches API Gateway or a function)", () => {
    cdn.resourceCountIs("AWS::CloudFront::Distribution", 1);
    const [distribution] = Object.values(cdn.findResources("AWS::CloudFront::Distribution")) as Resource[];
    const config = distribution!.Properties.DistributionConfig as {
      Origins: { Id: string; DomainName: unknown; CustomOriginConfig?: { OriginProtocolPolicy: string } }[];
      DefaultCacheBehavior: { CachePolicyId: unknown; AllowedMethods: string[]; TargetOriginId: string };
      CacheBehaviors: {
        PathPattern: string;
        CachePolicyId: { Ref: string };
        AllowedMethods: string[];
        TargetOriginId: string;
        OriginRequestPolicyId?: unknown;
      }[];
    };
    // One origin: the HTTP API's host, over HTTPS.
    expect(config.Origins).toHaveLength(1);
    expect(JSON.stringify(config.Origins[0]!.DomainName)).toMatch(/Fn::Select/);
    expect(config.Origins[0]!.CustomOriginConfig?.OriginProtocolPolicy).toBe("https-only");
    // Signed links: GET/HEAD only, cached under a policy keyed by every query parameter and nothing else.
    const signed = config.CacheBehaviors.find((b) => b.PathPattern === "/api/v1/screenshot")!;
    expect(signed.AllowedMethods.sort()).toEqual(["GET", "HEAD"]);
    // Its origin request policy forwards only the viewer's address (the Cdn test above), nothing of the cache key's business.
    expect(signed.OriginRequestPolicyId).toBeDefined();
    const policies = cdn.findResources("AWS::CloudFront::CachePolicy") as Record<string, Resource>;
    const policy = policies[signed.CachePolicyId.Ref]!.Properties.CachePolicyConfig as {
      MinTTL: number;
      DefaultTTL: number;
      MaxTTL: number;
      ParametersInCacheKeyAndForwardedToOrigin: {
        QueryStringsConfig: { QueryStringBehavior: string };
        HeadersConfig: { HeaderBehavior: string };
        CookiesConfig: { CookieBehavior: string };
      };
    };
    expect([policy.MinTTL, policy.DefaultTTL, policy.MaxTTL]).toEqual([0, 0, CDN_MAX_TTL_SECONDS]);
    expect(policy.ParametersInCacheKeyAndForwardedToOrigin.QueryStringsConfig.QueryStringBehavior).toBe("all");
    expect(policy.ParametersInCacheKeyAndForwardedToOrigin.HeadersConfig.HeaderBehavior).toBe("none");
    expect(policy.ParametersInCacheKeyAndForwardedToOrigin.CookiesConfig.CookieBehavior).toBe("none");
    // Everything else passes through uncached (AWS's managed CachingDisabled policy).
    expect(config.DefaultCacheBehavior.CachePolicyId).toBe("4135ea2d-6df8-44a3-9df3-4b5a84be39ad");
    expect(config.DefaultCacheBehavior.AllowedMethods).toContain("POST");
    cdn.hasOutput("CdnUrl", {});
  });
});

describe("Layers stack", () => {
  it("keeps a rendering function and its three layers well under Lambda's 250 MiB unzipped, without source maps", () => {
    for (const route of routes.filter((r) => r.browser)) {
      const { total } = deploymentSize(route.id);
      // With room to spare for what comes next (measured: ~221 MiB).
      expect(total, `${route.id}: ${Math.round(total / 2 ** 20)} MiB`).toBeLessThan(235 * 2 ** 20);
      // Source maps would be dead weight: nothing reads them at run time.
      expect(readdirSync(path.join(artifactOf(route.id), "functions")).filter((f) => f.endsWith(".map"))).toEqual([]);
    }
  });

  it("builds a Chromium layer from the installed @sparticuz/chromium, a fonts layer with every script's fonts, and the filter engines", () => {
    layers.resourceCountIs("AWS::Lambda::LayerVersion", 3);
    const chromium = readdirSync(path.join(".build", "layers", "chromium", "chromium"));
    expect(chromium).toEqual(expect.arrayContaining(["chromium.json", "swiftshader", "al2023", "fonts", CHROMIUM_BOOT_FILE]));
    // The binary in parts: those that compress well compressed, the rest raw (lib/render/packaging/chromium-pack.ts).
    expect(chromium.some((f) => f.endsWith(".zst")) && chromium.some((f) => f.endsWith(".bin"))).toBe(true);
    const fonts = readdirSync(path.join(".build", "layers", "fonts", "fonts"));
    expect(fonts.some((f) => f.startsWith("noto-color-emoji") && f.endsWith(".ttf"))).toBe(true);
    for (const han of ["sc", "tc", "jp", "kr"]) expect(fonts).toContain(`noto-sans-${han}.ttc`);
    for (const font of ["noto-sans-devanagari-devanagari-400-normal.ttf", "Arimo_400Regular.ttf", "Cousine_700Bold.ttf", "DejaVuSans.ttf"])
      expect(fonts).toContain(font);
    // fontconfig's index of these fonts and the Chromium layer's, by the uuid a function's linked font folder carries.
    const { uuid } = fontSet([path.join(".build", "layers", "chromium", "chromium", "fonts"), path.join(".build", "layers", "fonts", "fonts")]);
    expect(readdirSync(path.join(".build", "layers", "fonts", "fonts", FONT_CACHE_DIR))).toEqual([
      expect.stringMatching(new RegExp(`^${uuid}-le64\\.cache-\\d+$`)),
    ]);
    const engines = path.join(".build", "layers", "filter-lists", "filter-lists");
    for (const list of ["ads", "trackers"]) expect(statSync(path.join(engines, `${list}.engine`)).size, list).toBeGreaterThan(1_000_000);
  });
});

describe("Monitoring stack", () => {
  it("alarms on every function's errors and throttles, on settlements left unconfirmed and on dead letters, into one SNS topic", () => {
    monitoring.resourceCountIs("AWS::SNS::Topic", 1);
    const alarms = Object.values(monitoring.findResources("AWS::CloudWatch::Alarm")) as Resource[];
    const named = (metric: string) => alarms.filter((a) => a.Properties.MetricName === metric);
    // Every route's, the reconciler's, the auto-topup worker's, the jobs worker's and the webhook sender's.
    const functions = allRows.length;
    expect(named("Errors")).toHaveLength(functions);
    expect(named("Throttles")).toHaveLength(functions);
    expect(named("UnconfirmedSettlements")).toEqual([
      expect.objectContaining({
        Properties: expect.objectContaining({ Namespace: "Shotline", Dimensions: [{ Name: "Stage", Value: "test" }], EvaluationPeriods: 3, Threshold: 1 }),
      }),
    ]);
    // A message in either consumer's dead-letter queue.
    const dead = named("ApproximateNumberOfMessagesVisible");
    expect(dead).toHaveLength(consumers.length);
    for (const alarm of dead) expect(alarm.Properties).toMatchObject({ Namespace: "AWS/SQS", Statistic: "Maximum", Threshold: 1 });
    expect(JSON.stringify(dead.map((a) => a.Properties.Dimensions))).toMatch(/JobsDeadLetters.*WebhooksDeadLetters|WebhooksDeadLetters.*JobsDeadLetters/);
    for (const alarm of alarms) expect(alarm.Properties.AlarmActions, String(alarm.Properties.AlarmDescription)).toHaveLength(1);
    // No address to notify unless the operator gives one.
    monitoring.resourceCountIs("AWS::SNS::Subscription", 0);
    monitoring.hasOutput("AlarmTopicArn", {});
  });

  it("keeps a development stage's logs a week", () => {
    const retentions = Object.values(api.findResources("Custom::LogRetention")) as Resource[];
    expect(retentions.length).toBe(allRows.length);
    for (const r of retentions) expect(r.Properties.RetentionInDays).toBe(7);
  });
});

describe("a stage that is not for development (prod), with a domain and an alarm address", () => {
  let prod: { storage: Template; api: Template; cdn: Template; monitoring: Template };
  let prodOut: string;
  const settings = {
    SHOTLINE_DOMAIN: "shots.example.com",
    SHOTLINE_CERTIFICATE_ARN: "arn:aws:acm:us-east-1:123456789012:certificate/abc",
    SHOTLINE_ALARM_EMAIL: "ops@example.com",
  };

  beforeAll(async () => {
    Object.assign(process.env, settings);
    try {
      prodOut = await synthesize("prod");
    } finally {
      for (const name of Object.keys(settings)) delete process.env[name];
    }
    prod = {
      storage: Template.fromStack(getStack(Storage)),
      api: Template.fromStack(getStack(Api)),
      cdn: Template.fromStack(getStack(Cdn)),
      monitoring: Template.fromStack(getStack(Monitoring)),
    };
  }, 300_000);
  afterAll(() => rmSync(prodOut, { recursive: true, force: true }));

  it("keeps the table (deletion protection, point-in-time recovery) and the bucket when the stack goes", () => {
    prod.storage.hasResource("AWS::DynamoDB::Table", {
      DeletionPolicy: "Retain",
      Properties: Match.objectLike({ DeletionProtectionEnabled: true, PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true } }),
    });
    prod.storage.hasResource("AWS::S3::Bucket", { DeletionPolicy: "Retain" });
    // Nothing empties the bucket on removal.
    prod.storage.resourceCountIs("Custom::S3AutoDeleteObjects", 0);
    // The development stage's are not kept.
    storage.hasResource("AWS::DynamoDB::Table", { DeletionPolicy: "Delete", Properties: Match.objectLike({ DeletionProtectionEnabled: false }) });
  });

  it("keeps logs three months, serves the CDN on the domain, and mails the alarms", () => {
    for (const r of Object.values(prod.api.findResources("Custom::LogRetention")) as Resource[]) expect(r.Properties.RetentionInDays).toBe(90);
    prod.cdn.hasResourceProperties("AWS::CloudFront::Distribution", {
      DistributionConfig: Match.objectLike({
        Aliases: ["shots.example.com"],
        ViewerCertificate: Match.objectLike({ AcmCertificateArn: settings.SHOTLINE_CERTIFICATE_ARN }),
      }),
    });
    prod.cdn.hasOutput("CdnUrl", { Value: "https://shots.example.com" });
    prod.monitoring.hasResourceProperties("AWS::SNS::Subscription", { Protocol: "email", Endpoint: "ops@example.com" });
    // The domain is a host /mcp answers on.
    prod.api.hasResourceProperties("AWS::Lambda::Function", { Environment: { Variables: Match.objectLike({ PUBLIC_HOSTS: "shots.example.com" }) } });
  });
});

/** A function's /tmp for one run of a bundle, removed after the tests. */
const functionTmp = () => mkdtempSync(path.join(outdir, "tmp-"));

describe("the bundled MCP function", () => {
  it("loads from its bundle (the MCP SDK inside) and lists its tools", async () => {
    const dir = artifactOf("mcp");
    const message = { jsonrpc: "2.0", id: 1, method: "tools/list" };
    const { result } = await invokeBundle(dir, "mcp", message, inject("apiKey"), lambdaEnvironment(dir, inject("devInfo"), functionTmp()));
    expect(result.statusCode).toBe(200);
    const answer = JSON.parse(result.body) as { result: { tools: { name: string }[] } };
    expect(answer.result.tools.map((t) => t.name)).toEqual([
      "screenshot",
      "html_to_screenshot",
      "animate",
      "read_page",
      "scrape",
      "map_site",
      "crawl_site",
      "get_crawl",
      "metadata",
      "create_monitor",
      "list_monitors",
      "check_monitor",
      "get_check",
      "usage",
    ]);
  });
});

describe("the bundled render function", () => {
  it("renders emoji and CJK from its bundle, with Chromium, fonts, filter lists, autoconsent and sharp where the deployed environment points", async () => {
    const dir = artifactOf("html-to-screenshot");
    expect(existsSync(path.join(dir, "autoconsent", "autoconsent.playwright.js"))).toBe(true);
    // sharp and its native parts next to the handler (Lambda has no node_modules of ours otherwise).
    for (const { to } of COPIED_FILES.sharp) expect(existsSync(path.join(dir, to, "package.json")), to).toBe(true);
    // 9,000 px tall, past Chromium's one-piece limit: captured in tiles, stitched by the sharp copied next to the handler.
    const body = {
      html: "<p style='font-size:40px;margin:0'>Hi 你好 😀</p><div style='height:9000px;background:#0000ff'></div>",
      width: 400,
      height: 100,
      deviceScaleFactor: 1,
      fullPage: true,
      blockCookieBanners: true,
      blockAds: true,
      // chrome-har loads from the bundle too (its version written in: stacks/bundles.ts).
      capture: { har: true },
    };
    const tmp = functionTmp();
    const { result } = await invokeBundle(dir, "html-to-screenshot", body, inject("apiKey"), lambdaEnvironment(dir, inject("devInfo"), tmp));
    expect(result.statusCode).toBe(200);
    expect(result.headers["Content-Type"]).toBe("image/png");
    const har = (await (await fetch(result.headers["X-Har-Url"]!)).json()) as { log: { version: string; creator: { version: string } } };
    expect(har.log).toMatchObject({ version: "1.2", creator: { version: "1.3.1" } });
    // The fonts layer's index was taken: fontconfig writes one of its own only after indexing the fonts itself.
    const written = path.join(tmp, "shotline-fonts", "cache");
    expect(existsSync(written) ? readdirSync(written).filter((f) => f.includes(".cache-")) : []).toEqual([]);
    const image = await readImage(Buffer.from(result.body, "base64"));
    expect(image.bitmap.width).toBe(400);
    expect(image.bitmap.height).toBeGreaterThan(9000);
    expect(image.getPixelColor(200, 9000)).toBe(0x0000ffff);
    let yellow = 0;
    const { data } = image.bitmap;
    for (let i = 0; i < data.length; i += 4) if (data[i]! > 200 && data[i + 1]! > 140 && data[i + 2]! < 90) yellow++;
    expect(yellow, "colour emoji drawn from the fonts layer").toBeGreaterThan(200);
  }, 90_000);

  it("draws every writing system from the fonts layer, as the local stack does", async () => {
    const dir = artifactOf("html-to-screenshot");
    const systems = writingSystems(60);
    const [row, px] = [100, 32];
    const body = { html: textRowsHtml(systems, row, px), width: 1600, height: systems.length * row, deviceScaleFactor: 1 };
    const { result } = await invokeBundle(dir, "html-to-screenshot", body, inject("apiKey"), lambdaEnvironment(dir, inject("devInfo"), functionTmp()));
    expect(result.statusCode).toBe(200);
    const image = await readImage(Buffer.from(result.body, "base64"));
    const problems = systems.flatMap(({ name, text }, i) =>
      textProblems(inkBand(image, i * row, (i + 1) * row), [...text].length, px).map((problem) => `${name}: ${problem}`),
    );
    expect(problems).toEqual([]);
  }, 90_000);
});

// Last in this file (the files' tests run in order): sst's own CLI writes the same .sst/artifacts and
// .build/layers the tests above read.
describe("sst's own CLI", () => {
  it("builds all five stacks with `sst build`, as `sst deploy` starts, asking AWS only who it is and whether it is bootstrapped", async () => {
    // AWS cannot run here: a loopback stand-in answers the three calls `sst build` makes (STS
    // GetCallerIdentity, CloudFormation DescribeStacks of CDK's and SST's bootstrap stacks) and
    // refuses anything else, which would fail the build.
    const asked: string[] = [];
    const stackXml = (name: string, outputs: Record<string, string>) =>
      `<Stacks><member><StackName>${name}</StackName><StackId>arn:aws:cloudformation:us-east-1:123456789012:stack/${name}/1</StackId>` +
      `<CreationTime>2026-01-01T00:00:00Z</CreationTime><StackStatus>CREATE_COMPLETE</StackStatus><Outputs>` +
      Object.entries(outputs)
        .map(([key, value]) => `<member><OutputKey>${key}</OutputKey><OutputValue>${value}</OutputValue></member>`)
        .join("") +
      "</Outputs></member></Stacks>";
    const answers: Record<string, string> = {
      GetCallerIdentity: "<Arn>arn:aws:iam::123456789012:user/ci</Arn><UserId>AIDACI</UserId><Account>123456789012</Account>",
      "DescribeStacks CDKToolkit": stackXml("CDKToolkit", { BootstrapVersion: "21", BucketName: "cdk-assets" }),
      "DescribeStacks SSTBootstrap": stackXml("SSTBootstrap", { Version: "7.4", BucketName: "sst-bootstrap" }),
    };
    const aws = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk) => (body += chunk));
      req.on("end", () => {
        const form = new URLSearchParams(body);
        const action = form.get("Action") ?? String(req.headers["x-amz-target"]);
        const call = [action, form.get("StackName")].filter(Boolean).join(" ");
        asked.push(call);
        const answer = answers[call];
        res.writeHead(answer ? 200 : 400, { "content-type": "text/xml" });
        res.end(
          answer
            ? `<${action}Response><${action}Result>${answer}</${action}Result></${action}Response>`
            : `<ErrorResponse><Error><Type>Sender</Type><Code>ValidationError</Code><Message>not here: ${call}</Message></Error></ErrorResponse>`,
        );
      });
    });
    await new Promise<void>((resolve) => aws.listen(0, "127.0.0.1", resolve));
    const out = mkdtempSync(path.join(tmpdir(), "shotline-sst-build-"));
    try {
      const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
        const child = spawn(path.resolve("node_modules/.bin/sst"), ["build", "--stage", "cli", "--to", out], {
          env: {
            ...process.env,
            // Not vitest's "test", in which SST skips the bootstrap lookup.
            NODE_ENV: "production",
            AWS_ENDPOINT_URL: `http://127.0.0.1:${(aws.address() as AddressInfo).port}`,
            AWS_ACCESS_KEY_ID: "AKIDCI",
            AWS_SECRET_ACCESS_KEY: "ci",
            AWS_REGION: "us-east-1",
            SST_TELEMETRY_DISABLED: "1",
            SHOTLINE_MAIL_FROM: "signup@example.com",
            X402_PAY_TO: "0x000000000000000000000000000000000000bEEF",
          },
        });
        let output = "";
        child.stdout.on("data", (chunk) => (output += chunk));
        child.stderr.on("data", (chunk) => (output += chunk));
        child.on("close", (code) => resolve({ code, output }));
      });
      expect(code, output).toBe(0);
      expect(asked.sort()).toEqual(["DescribeStacks CDKToolkit", "DescribeStacks SSTBootstrap", "GetCallerIdentity"]);
      const templates = readdirSync(out).filter((f) => f.endsWith(".template.json"));
      expect(templates.sort()).toEqual(["Api", "Cdn", "Layers", "Monitoring", "Storage"].map((stack) => `cli-shotline-${stack}.template.json`));
      // The same functions as the synthesis above, and the Chromium layer with its boot module
      // (whose path, relative to the stacks' own file, once pointed outside the repository here).
      const built = JSON.parse(readFileSync(path.join(out, "cli-shotline-Api.template.json"), "utf8")) as {
        Resources: Record<string, { Type: string; Properties: { Handler?: string } }>;
      };
      const handlers = Object.values(built.Resources)
        .filter((r) => r.Type === "AWS::Lambda::Function" && r.Properties.Handler?.startsWith("functions/"))
        .map((r) => r.Properties.Handler);
      expect(handlers.sort()).toEqual(
        Object.values(api.findResources("AWS::Lambda::Function"))
          .map((r) => (r as Resource).Properties.Handler)
          .filter((h) => String(h).startsWith("functions/"))
          .sort(),
      );
      const assets = readdirSync(out).filter((f) => f.startsWith("asset."));
      expect(assets.filter((asset) => existsSync(path.join(out, asset, "chromium", CHROMIUM_BOOT_FILE)))).toHaveLength(1);
    } finally {
      aws.close();
      rmSync(out, { recursive: true, force: true });
    }
  }, 600_000);
});
