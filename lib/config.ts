import { z } from "zod";

// Every environment variable the service reads, parsed and validated once. A bad value fails at
// cold start (module load) with a message naming the variable, never halfway through a request.
const envSchema = z.object({
  STAGE: z.string().min(1).default("local"),
  // package.json's version, set by stacks/Api.ts at deploy and by lib/local/dev.ts locally.
  SHOTLINE_VERSION: z.string().min(1).default("unknown"),
  AWS_REGION: z.string().min(1).default("us-east-1"),
  TABLE_NAME: z.string().min(1).default("shotline-local"),
  BUCKET_NAME: z.string().min(1).default("shotline-outputs-local"),
  // Set only for the local stack (DynamoDB Local, s3rver); unset on AWS.
  DYNAMODB_ENDPOINT: z.url().optional(),
  S3_ENDPOINT: z.url().optional(),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  LOCAL_DIR: z.string().min(1).default(".local"),
  INLINE_LIMIT_BYTES: z.coerce.number().int().positive().default(4 * 1024 * 1024),
  RATE_LIMIT_PER_SECOND: z.coerce.number().int().positive().default(10),
  // Account creations per client IP per hour.
  SIGNUP_LIMIT_PER_HOUR: z.coerce.number().int().positive().default(10),
  // Comma-separated exact host:port pairs the network guard lets through (tests, self-hosting).
  ALLOWED_PRIVATE_HOSTS: z.string().default(""),
  // Where the Chromium layer puts @sparticuz/chromium's bin/ on Lambda; unset: the npm package's own.
  CHROMIUM_BIN_DIR: z.string().min(1).optional(),
  // Set on Lambda to the fonts layer (/opt/fonts); unset: fonts are built into the temp dir.
  FONTS_DIR: z.string().min(1).optional(),
  // Where autoconsent's content script and rules are copied next to the handler on Lambda; unset: node_modules.
  AUTOCONSENT_DIR: z.string().min(1).optional(),
  // Pages rendered at once by one process; more only queue (2 vCPU saturate at about 2).
  RENDER_CONCURRENCY: z.coerce.number().int().min(1).max(32).default(4),
  // INTERFACE.md: a page that takes longer to load gives RENDER_TIMEOUT.
  PAGE_LOAD_TIMEOUT_MS: z.coerce.number().int().min(1000).max(60_000).default(30_000),
  // Lifetime of the presigned link to a large output.
  DOWNLOAD_LINK_SECONDS: z.coerce.number().int().min(60).max(7 * 24 * 3600).default(3600),
  LOG_LEVEL: z.enum(["debug", "info", "warn", "error"]).default("info"),
});

export type Config = Readonly<z.infer<typeof envSchema> & { allowedPrivateHosts: readonly string[] }>;

/** Parses an environment (process.env by default) into the service configuration. */
export function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
    throw new Error(`Invalid configuration: ${problems}`);
  }
  const allowedPrivateHosts = parsed.data.ALLOWED_PRIVATE_HOSTS.split(",")
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean);
  return Object.freeze({ ...parsed.data, allowedPrivateHosts });
}

/** The configuration of this process, read when the module is first imported. */
export const config: Config = readConfig();
