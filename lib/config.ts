import { z } from "zod";

// Every environment variable the service reads, parsed and validated once. A bad value fails at
// cold start (module load) with a message naming the variable, never halfway through a request.
const envSchema = z.object({
  STAGE: z.string().min(1).default("local"),
  // package.json's version, set by stacks/Api.ts at deploy and by dev/dev.ts locally.
  SHOTLINE_VERSION: z.string().min(1).default("unknown"),
  AWS_REGION: z.string().min(1).default("us-east-1"),
  TABLE_NAME: z.string().min(1).default("shotline-local"),
  BUCKET_NAME: z.string().min(1).default("shotline-outputs-local"),
  // Set only for the local stack (DynamoDB Local, s3rver); unset on AWS.
  DYNAMODB_ENDPOINT: z.url().optional(),
  S3_ENDPOINT: z.url().optional(),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  LOCAL_DIR: z.string().min(1).default(".local"),
  INLINE_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(4 * 1024 * 1024),
  RATE_LIMIT_PER_SECOND: z.coerce.number().int().positive().default(10),
  // Account creations per client IP per hour.
  SIGNUP_LIMIT_PER_HOUR: z.coerce.number().int().positive().default(10),
  // Signup bonuses wait for the address to be verified by a mailed link (docs/api.md, "Keys and
  // accounts"): on for deployed stages (stacks/Api.ts), off by default locally (immediate bonus).
  SIGNUP_VERIFICATION: z.enum(["on", "off"]).default("off"),
  // The sender of that mail (an address or domain verified in Amazon SES), and the SES template it
  // is sent with (the stack creates it from lib/billing/mail.ts; it takes {{link}}).
  MAIL_FROM: z.email().optional(),
  VERIFY_EMAIL_TEMPLATE: z.string().min(1).default("shotline-verify-email"),
  // Set only locally: an SES endpoint (aws-ses-v2-local, the mail catcher dev/dev.ts starts); unset on AWS.
  SES_ENDPOINT: z.url().optional(),
  // Jobs (docs/api.md, "Jobs"): the queues their items and their webhooks' attempts go through (set
  // by the stack, or by dev/dev.ts for the local SQS), and set only locally, that SQS's endpoint.
  JOBS_QUEUE_URL: z.url().optional(),
  WEBHOOKS_QUEUE_URL: z.url().optional(),
  SQS_ENDPOINT: z.url().optional(),
  // Secrets at rest (lib/storage/sealed.ts): the KMS key that wraps them (set by the stack), or,
  // set only locally, a key of 32 bytes (base64) that does (dev/dev.ts makes .local/secrets.key),
  // and the KMS endpoint to use instead of AWS's (tests).
  SECRETS_KEY_ID: z.string().min(1).optional(),
  SECRETS_LOCAL_KEY: z
    .string()
    .regex(/^[A-Za-z0-9+/]{43}=$/, { error: "must be 32 bytes in base64" })
    .optional(),
  KMS_ENDPOINT: z.url().optional(),
  // Webhook retries wait their schedule times this (tests shorten it; docs/api.md, "Jobs").
  WEBHOOK_BACKOFF_SCALE: z.coerce.number().min(0.001).max(1).default(1),
  // Failed authentications (a wrong API key) per client IP per minute; past it, 429 for the rest of the minute.
  AUTH_FAILURES_PER_MINUTE: z.coerce.number().int().positive().default(20),
  // Comma-separated exact host:port pairs the network guard lets through (tests, self-hosting).
  ALLOWED_PRIVATE_HOSTS: z.string().default(""),
  // Comma-separated host names (with :port when not the default) the service is reached on besides
  // API Gateway's own domain (on Lambda) or loopback (elsewhere): a custom domain, the CDN's, a
  // self-hosted server's. /mcp refuses any other Host or Origin (DNS rebinding).
  PUBLIC_HOSTS: z.string().default(""),
  // The secret header our CloudFront adds to what it sends the API (stacks/Cdn.ts): only a request
  // carrying it has its CloudFront-Viewer-Address believed (lib/http/client-address.ts). Unset: never.
  EDGE_SECRET: z.string().min(32).optional(),
  // Set by Lambda: the function's name (a rendering function launches its browser during INIT), and
  // its runtime ("AWS_Lambda_nodejs24.x", Amazon Linux 2023: the Chromium layer brings libraries it lacks).
  AWS_LAMBDA_FUNCTION_NAME: z.string().min(1).optional(),
  AWS_EXECUTION_ENV: z.string().min(1).optional(),
  // The Chromium layer on Lambda (packed by lib/render/packaging/chromium-pack.ts); unset: @sparticuz/chromium's own bin/.
  CHROMIUM_BIN_DIR: z.string().min(1).optional(),
  // Set on Lambda to the fonts layer (/opt/fonts); unset: fonts are built into the temp dir.
  FONTS_DIR: z.string().min(1).optional(),
  // Set on Lambda to the filter-lists layer (/opt/filter-lists); unset: the engines are built into the temp dir.
  FILTER_LISTS_DIR: z.string().min(1).optional(),
  // Where autoconsent's content script and rules are copied next to the handler on Lambda; unset: node_modules.
  AUTOCONSENT_DIR: z.string().min(1).optional(),
  // Where the dashboard's files are (copied next to the handler on Lambda); default: the repo's dashboard/.
  DASHBOARD_DIR: z.string().min(1).optional(),
  // Pages rendered at once by one process; more only queue (2 vCPU saturate at about 2).
  RENDER_CONCURRENCY: z.coerce.number().int().min(1).max(32).default(4),
  // docs/api.md: a page that takes longer to load gives RENDER_TIMEOUT.
  PAGE_LOAD_TIMEOUT_MS: z.coerce.number().int().min(1000).max(60_000).default(30_000),
  // Lifetime of the presigned link to a large output.
  DOWNLOAD_LINK_SECONDS: z.coerce
    .number()
    .int()
    .min(60)
    .max(7 * 24 * 3600)
    .default(3600),
  // x402 (pay per request in USDC). Production default: Base mainnet USDC.
  X402_NETWORK: z
    .string()
    .regex(/^eip155:\d+$/)
    .default("eip155:8453"),
  // The same network's name for x402 v1 clients, which know only named networks.
  X402_V1_NETWORK: z.string().min(1).default("base"),
  X402_ASSET: z
    .string()
    .regex(/^0x[0-9a-fA-F]{40}$/)
    .default("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"),
  X402_ASSET_NAME: z.string().min(1).default("USD Coin"),
  X402_ASSET_VERSION: z.string().min(1).default("2"),
  // Where payments go; without it x402 is not offered (402 says so).
  X402_PAY_TO: z
    .string()
    .regex(/^0x[0-9a-fA-F]{40}$/)
    .optional(),
  X402_FACILITATOR_URL: z.url().default("https://x402.org/facilitator"),
  // An RPC endpoint of X402_NETWORK, to confirm on chain a settlement the facilitator left pending
  // (default: the public Base RPC for Base and Base Sepolia). With X402_FACILITATOR_PRIVATE_KEY
  // (the local chain), the facilitator runs in process through it, that key paying the gas.
  X402_RPC_URL: z.url().optional(),
  X402_FACILITATOR_PRIVATE_KEY: z
    .string()
    .regex(/^0x[0-9a-fA-F]{64}$/)
    .optional(),
  // Auto-topup (docs/api.md, "Auto-topup"): the key of the service's top-up address, which customers
  // grant a USDC allowance and which sends their pulls (it pays the gas and should hold nothing but
  // gas: a secret of its own, never the facilitator's). Unset: auto-topup is not offered.
  AUTO_TOPUP_PRIVATE_KEY: z
    .string()
    .regex(/^0x[0-9a-fA-F]{64}$/)
    .optional(),
  // The top-up address (the key's), for the functions that show it without holding the key; unset: derived from the key.
  AUTO_TOPUP_ADDRESS: z
    .string()
    .regex(/^0x[0-9a-fA-F]{40}$/)
    .optional(),
  // On Lambda, the auto-topup function a charge invokes asynchronously (set by the stack).
  AUTO_TOPUP_FUNCTION: z.string().min(1).optional(),
  // An x402 request's work must end this long before the request's deadline, so that settling it
  // always has this much time; settling is given what is left, at most X402_SETTLE_TIMEOUT_SECONDS.
  X402_SETTLE_RESERVE_SECONDS: z.coerce.number().int().min(1).max(20).default(5),
  X402_SETTLE_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(25).default(10),
  // A charge neither delivered nor refunded this long after its request began is refunded by the
  // reconciler: longer than any request can last (30 s at the gateway), with room for clock skew.
  RECONCILE_GRACE_SECONDS: z.coerce.number().int().min(1).max(86_400).default(120),
  LOG_LEVEL: z.enum(["debug", "info", "warn", "error"]).default("info"),
  // The page the crawler's User-Agent names, saying what it is and how to reach its operator
  // (docs/crawl.md): set by the stack to the deployment's reference page, by `npm run dev` to its own.
  CRAWLER_INFO_URL: z.url().optional(),
});

export type Config = Readonly<
  z.infer<typeof envSchema> & { privateHosts: { allowed: ReadonlySet<string>; explain: boolean }; publicHosts: ReadonlySet<string> }
>;

/** Parses an environment (process.env by default) into the service configuration. */
function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
    throw new Error(`Invalid configuration: ${problems}`);
  }
  if (parsed.data.SIGNUP_VERIFICATION === "on" && !parsed.data.MAIL_FROM)
    throw new Error("Invalid configuration: MAIL_FROM: SIGNUP_VERIFICATION=on sends mail, and needs a sender address");
  const list = (value: string): ReadonlySet<string> =>
    new Set(
      value
        .split(",")
        .map((h) => h.trim().toLowerCase())
        .filter(Boolean),
    );
  // Off Lambda (npm run dev, self-hosting), a refused private page says how to allow it.
  const privateHosts = { allowed: list(parsed.data.ALLOWED_PRIVATE_HOSTS), explain: !parsed.data.AWS_LAMBDA_FUNCTION_NAME };
  return Object.freeze({ ...parsed.data, privateHosts, publicHosts: list(parsed.data.PUBLIC_HOSTS) });
}

/** The configuration of this process, read when the module is first imported. */
export const config: Config = readConfig();
