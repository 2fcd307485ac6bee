import { z } from "zod";
import type { UsageReport } from "../billing/usage.js";
import type { ErrorCode } from "../errors.js";
import type { Metadata } from "../metadata/extract.js";

// The bodies the API answers, as zod schemas: the OpenAPI document (lib/http/openapi.ts) is made
// from them, and the tests check real answers against that document. Where a TypeScript type
// already says what a handler returns, the schema is checked against it at compile time.

const ERROR_CODES = [
  "INVALID_PARAMS",
  "UNAUTHORIZED",
  "INSUFFICIENT_BALANCE",
  "PAYMENT_REQUIRED",
  "INVALID_SIGNATURE",
  "LINK_EXPIRED",
  "NOT_FOUND",
  "METHOD_NOT_ALLOWED",
  "IDEMPOTENCY_CONFLICT",
  "TOO_MANY_SIGNING_KEYS",
  "TOO_MANY_API_KEYS",
  "TOO_MANY_MONITORS",
  "MONITOR_PAUSED",
  "LAST_API_KEY",
  "PAYER_TAKEN",
  "IDEMPOTENCY_IN_PROGRESS",
  "UNSUPPORTED_MEDIA_TYPE",
  "INVALID_URL",
  "SELECTOR_NOT_FOUND",
  "PAGE_RANGE_EMPTY",
  "RATE_LIMITED",
  "DAILY_LIMIT_REACHED",
  "RENDER_ERROR",
  "INTERNAL_ERROR",
  "PROXY_ERROR",
  "RENDER_TIMEOUT",
  "TIMEOUT",
] as const satisfies readonly ErrorCode[];

/** Every error: `{ error: { code, message } }`. */
export const errorBody = z
  .object({ error: z.object({ code: z.enum(ERROR_CODES), message: z.string() }) })
  .meta({ example: { error: { code: "INVALID_PARAMS", message: "Invalid request: width: must be an integer from 320 to 3840." } } });

/** A 402 without payment: an x402 v1 PaymentRequired (its `error` a string) with our code beside it. */
export const paymentRequiredBody = z.object({
  x402Version: z.literal(1),
  error: z.string(),
  code: z.literal("PAYMENT_REQUIRED"),
  accepts: z.array(z.looseObject({ scheme: z.literal("exact"), network: z.string(), maxAmountRequired: z.string(), payTo: z.string(), asset: z.string() })),
});

const clip = z.object({ x: z.number(), y: z.number(), width: z.number(), height: z.number() });

/** A render's logs (`capture`, docs/api.md "What the page did"): each a link (kept a day) and its counts. */
const logLink = <T extends z.ZodRawShape>(counts: T, what: string) =>
  z
    .object({ url: z.string(), expiresAt: z.string(), ...counts })
    .optional()
    .describe(what);
const logFields = {
  har: logLink({ entries: z.number().int() }, "with capture.har: the HAR 1.2 file of the page's requests"),
  console: logLink({ messages: z.number().int(), errors: z.number().int() }, "with capture.console: the console messages and uncaught errors (JSON)"),
  network: logLink({ failures: z.number().int() }, "with capture.network: the requests that failed, were blocked or still loaded (JSON)"),
};

const envelope = {
  ...logFields,
  format: z.enum(["png", "jpeg", "webp", "avif", "pdf"]),
  contentType: z.string(),
  width: z.number().int().describe("Output pixels (for a PDF, CSS px of one page)"),
  height: z.number().int(),
  pages: z.number().int().optional().describe("PDF pages"),
  bytes: z.number().int(),
  url: z.string().nullable().describe("The final URL after redirects; null for HTML"),
  title: z.string(),
  truncated: z.boolean(),
  clip: clip.optional(),
  incomplete: z
    .enum(["load-timeout"])
    .optional()
    .describe("present when the page's load event never came: the capture shows the page as it stood at the page-load limit (it had painted content)"),
  geo: z
    .object({
      country: z.string().nullable().describe("ISO 3166-1 alpha-2; null where it cannot be known"),
      source: z.enum(["country", "proxy-credentials", "none"]),
    })
    .optional()
    .describe('with geo "auto": the country whose locale and time zone the page got, and where it was found'),
  renderMs: z.number().int(),
};

/** An example of a render's JSON envelope (the OpenAPI document's and x402 discovery's). */
export const RENDER_EXAMPLE = {
  image: "iVBORw0KGgoAAAANSUhEUgAA...",
  format: "png",
  contentType: "image/png",
  width: 2560,
  height: 1600,
  bytes: 183402,
  url: "https://example.com/",
  title: "Example Domain",
  truncated: false,
  renderMs: 812,
};

/** A render with `responseFormat: "json"`: the output inline (base64), or a link to it when large. */
export const renderEnvelope = z
  .union([
    z.object({ image: z.string().describe("The output, base64"), ...envelope }),
    z.object({ downloadUrl: z.string(), expiresAt: z.string(), ...envelope }),
  ])
  .meta({ example: RENDER_EXAMPLE });

/** An example of an animation's JSON envelope. */
export const ANIMATION_EXAMPLE = {
  downloadUrl: "https://shotline-outputs.s3.amazonaws.com/outputs/2026-11-27/0f8c1e2a-6b1d-4a57-9a0e-3c5d7f9b2e11.mp4?X-Amz-Signature=...",
  expiresAt: "2026-11-27T13:00:00.000Z",
  format: "mp4",
  contentType: "video/mp4",
  width: 1280,
  height: 800,
  frames: 150,
  durationMs: 5000,
  scrolledTo: 2240,
  bytes: 1183402,
  url: "https://example.com/",
  title: "Example Domain",
  renderMs: 4120,
};

const animationFields = {
  ...logFields,
  format: z.enum(["mp4", "webm", "gif", "webp"]),
  contentType: z.string(),
  width: z.number().int().describe("Frame width, device px"),
  height: z.number().int().describe("Frame height, device px"),
  frames: z.number().int(),
  durationMs: z.number().int().describe("frames / fps"),
  scrolledTo: z.number().int().describe("The scroll target reached, CSS px from the top"),
  bytes: z.number().int(),
  url: z.string().nullable().describe("The final URL after redirects; null for HTML"),
  title: z.string(),
  incomplete: envelope.incomplete,
  geo: envelope.geo,
  renderMs: z.number().int(),
};

/** An animation with `responseFormat: "json"`: the file inline (base64), or a link to it when large. */
export const animationEnvelope = z
  .union([
    z.object({ image: z.string().describe("The file, base64"), ...animationFields }),
    z.object({ downloadUrl: z.string(), expiresAt: z.string(), ...animationFields }),
  ])
  .meta({ example: ANIMATION_EXAMPLE });

const usageEntry = z.object({
  id: z.string(),
  kind: z.enum(["charge", "topup", "bonus"]),
  endpoint: z.string(),
  amount_micro_usd: z.number().int(),
  status: z.enum(["charged", "refunded", "credited", "failed"]),
  created_at: z.string(),
  auto: z.literal(true).optional().describe("an auto-topup pull"),
  reason: z.string().optional().describe("why an auto-topup pull failed"),
});

/** An account's auto-topup, as GET /api/v1/auto-topup and the usage report show it. */
const autoTopupView = z
  .object({
    status: z.enum(["active", "paused"]),
    threshold_cents: z.number().int(),
    amount_cents: z.number().int(),
    monthly_cap_cents: z.number().int(),
    payer: z.string(),
    month: z.string().describe("the calendar month (UTC) of month_total_cents"),
    month_total_cents: z.number().int().describe("pulled this month, the one in flight included"),
    in_flight: z.boolean(),
    last_failure: z.object({ at: z.string(), reason: z.string() }).nullable(),
    paused_reason: z.string().nullable(),
  })
  .nullable();

/** GET /api/v1/usage (and PATCH /api/v1/account). */
export const usageReport = z.object({
  balance_cents: z.number().int().describe("what may be spent now; what jobs hold is out of it"),
  balance_micro_usd: z.number().int(),
  held_cents: z.number().int().describe("held by jobs until their items are charged or give it back"),
  held_micro_usd: z.number().int(),
  total_spent_cents: z.number().int(),
  total_spent_micro_usd: z.number().int(),
  auto_topup_enabled: z.boolean(),
  auto_topup: autoTopupView,
  recent_usage: z.array(usageEntry),
});

/** GET, PUT and DELETE /api/v1/auto-topup. */
export const autoTopupResponse = z.object({
  auto_topup: autoTopupView,
  offered: z.boolean().describe("false: this deployment has no top-up address (the fields below are null)"),
  account_id: z.string().describe("this account's id: what a payer's authorization names"),
  spender: z.string().nullable().describe("the address to grant the USDC allowance to"),
  token: z.string().nullable(),
  tokenName: z.string().nullable().describe("the token's EIP-712 domain name, for the permit"),
  tokenVersion: z.string().nullable().describe("the token's EIP-712 domain version"),
  network: z.string().nullable().describe("CAIP-2"),
  chainId: z.number().int().nullable(),
  allowance_micro_usd: z.number().int().nullable().describe("the payer's allowance for spender, as the chain shows it now"),
});

/** POST /api/v1/topup: the usage report and the top-up's state. */
export const topupResponse = usageReport.extend({
  topup: z.object({ status: z.enum(["credited", "pending"]), transaction: z.string().nullable() }),
});

/** POST /api/v1/signup. */
export const signupResponse = z.object({
  api_key: z.string(),
  account_id: z.string(),
  balance_cents: z.number().int(),
  balance_micro_usd: z.number().int(),
  bonus: z
    .enum(["credited", "pending_verification", "none"])
    .describe(
      "The signup bonus: on the balance now, credited when the link mailed to the address is followed, or none (the address has had it, or is at a disposable-mail domain)",
    ),
});

/** POST /api/v1/metadata. */
export const metadataResponse = z.object({
  title: z.string(),
  description: z.string(),
  ogImage: z.string().nullable(),
  ogTitle: z.string().nullable(),
  ogDescription: z.string().nullable(),
  favicon: z.string(),
  themeColor: z.string().nullable(),
  lang: z.string().nullable(),
  canonical: z.string().nullable(),
  siteName: z.string().nullable(),
  type: z.string().nullable(),
  author: z.string().nullable(),
  publishedTime: z.string().nullable(),
  modifiedTime: z.string().nullable(),
  twitterCard: z.string().nullable(),
  twitterSite: z.string().nullable(),
  ogImageWidth: z.number().int().nullable(),
  ogImageHeight: z.number().int().nullable(),
  ogImageAlt: z.string().nullable(),
  logo: z.string().nullable(),
  feeds: z.array(z.string()),
});

/** POST /api/v1/signing-keys: the key's id and, this once, its secret. */
const signingKey = { keyId: z.string(), createdAt: z.string(), dailyLimitCents: z.number().int().nullable() };
export const signingKeyCreated = z.object({ ...signingKey, secret: z.string() });

/** GET /api/v1/signing-keys. */
export const signingKeyList = z.object({ signingKeys: z.array(z.object(signingKey)) });

const apiKey = {
  id: z.string(),
  name: z.string().nullable(),
  start: z.string(),
  end: z.string(),
  created_at: z.string(),
  last_used_at: z.string().nullable(),
};
/** POST /api/v1/api-keys: the key's listing and, this once, the key. */
export const apiKeyCreated = z.object({ ...apiKey, api_key: z.string() });
/** GET /api/v1/api-keys. */
export const apiKeyList = z.object({ api_keys: z.array(z.object(apiKey)) });

/** GET /api/v1/health. */
export const healthResponse = z.object({ status: z.literal("ok"), version: z.string() });

/** A job as GET /api/v1/jobs/{id} answers it (lib/http/jobs.ts). */
export const jobResponse = z.object({
  id: z.string(),
  endpoint: z.enum(["screenshot", "html-to-screenshot", "content", "animate"]),
  status: z.enum(["queued", "running", "completed", "cancelled"]),
  created_at: z.string(),
  expires_at: z.string().describe("when the job, its results and outputs are deleted (7 days after it was made)"),
  counts: z.record(z.string(), z.number().int()).describe("items by status"),
  charged_micro_usd: z.number().int(),
  links_expire_in_seconds: z.number().int().describe("how long the links in this answer work; read the job again for fresh ones"),
  items: z.array(
    z.object({
      index: z.number().int(),
      status: z.enum(["queued", "running", "succeeded", "failed", "cancelled"]),
      charged_micro_usd: z.number().int(),
      started_at: z.string().optional(),
      finished_at: z.string().optional(),
      result: z
        .record(z.string(), z.unknown())
        .optional()
        .describe("the synchronous endpoint's JSON envelope (a content answer's summary), its output at downloadUrl"),
      error: z.object({ code: z.string(), message: z.string() }).optional(),
      upload: z
        .object({ status: z.enum(["uploaded", "failed"]), http_status: z.number().int().optional(), error: z.string().optional() })
        .optional()
        .describe("with upload: what the customer's URL answered the PUT of the output"),
    }),
  ),
  webhook: z
    .object({
      url: z.string(),
      events: z.array(z.enum(["job.completed", "job.item"])),
      deliveries: z.array(
        z.object({
          id: z.string().describe("the webhook-id header, the same on every attempt"),
          type: z.enum(["job.completed", "job.item"]),
          status: z.enum(["pending", "delivered", "failed"]),
          attempts: z.array(z.object({ at: z.string(), status: z.number().int().optional(), error: z.string().optional() })),
        }),
      ),
    })
    .optional()
    .describe("with webhookUrl: where its events go and each delivery's attempts"),
});

/** GET /api/v1/jobs. */
export const jobList = z.object({
  jobs: z.array(
    z.object({
      id: z.string(),
      endpoint: z.string(),
      status: z.string(),
      created_at: z.string(),
      items: z.number().int(),
      succeeded: z.number().int(),
      failed: z.number().int(),
      charged_micro_usd: z.number().int(),
    }),
  ),
});

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const schemasMatchTypes: Same<z.output<typeof usageReport>, UsageReport> &
  Same<z.output<typeof metadataResponse>, Metadata> &
  Same<(typeof ERROR_CODES)[number], ErrorCode> = true;
void schemasMatchTypes;

/** POST /api/v1/content: the page's content in the format asked for (one of markdown, text, html). */
export const contentResponse = z.object({
  url: z.string().nullable().describe("the final URL, after redirects; null for a document sent as html"),
  title: z.string(),
  markdown: z.string().optional(),
  text: z.string().optional(),
  html: z.string().optional().describe("the cleaned HTML of what was kept"),
  metadata: metadataResponse,
  links: z.array(z.object({ url: z.string(), text: z.string() })).optional(),
  data: z
    .record(z.string(), z.union([z.string(), z.null(), z.array(z.union([z.string(), z.null()]))]))
    .optional()
    .describe("each extract field's text or attribute (null: nothing matched), or a list with all"),
  screenshot: z
    .object({ downloadUrl: z.string(), expiresAt: z.string(), ...envelope })
    .optional()
    .describe("with screenshot: the render's JSON envelope, its output behind a presigned link"),
  rendered: z.boolean().describe("whether a browser ran the page's scripts"),
  incomplete: envelope.incomplete,
  geo: envelope.geo,
  tokens: z.number().int().describe("an estimate of the content's tokens (about 4 characters each)"),
  ...logFields,
});

/** POST /api/v1/map: the site's URLs, where each was found, and what was left out. */
export const mapResponse = z.object({
  url: z.string().describe("the start URL, normalised"),
  urls: z.array(
    z.object({
      url: z.string(),
      source: z.enum(["start", "sitemap", "link"]).describe("where it was found"),
      lastmod: z.string().optional().describe("its sitemap's <lastmod>, as written"),
    }),
  ),
  skipped: z
    .object({ robots: z.number().int(), scope: z.number().int(), trap: z.number().int() })
    .describe("URLs found but left out: disallowed by robots.txt, out of scope, or a trap's shape"),
  sitemaps: z
    .array(z.object({ url: z.string(), entries: z.number().int(), stopped: z.string().optional().describe("why it was read only in part") }))
    .describe("the sitemaps read"),
  robots: z.object({ found: z.boolean(), crawlDelay: z.number().describe("seconds between requests robots.txt asks (at most 10)") }),
  incomplete: z.literal(true).optional().describe("time ran out before everything was read"),
});

/** A crawl as listed: status, counts, what it cost. */
export const crawlSummaryResponse = z.object({
  id: z.string(),
  url: z.string().describe("the start URL, normalised"),
  status: z.enum(["running", "completed", "cancelled"]),
  created_at: z.string(),
  finished_at: z.string().optional(),
  expires_at: z.string().describe("when it and its pages' outputs are deleted (7 days)"),
  limit: z.number().int(),
  counts: z.object({
    discovered: z.number().int().describe("URLs recorded (found, in scope or not)"),
    delivered: z.number().int(),
    failed: z.number().int(),
    skipped: z
      .record(z.string(), z.number().int())
      .describe("by reason: robots, scope, trap, duplicate, limit, guard, too large, not html, unchanged, cancelled"),
  }),
  charged_micro_usd: z.number().int(),
  held_micro_usd: z.number().int().optional().describe("while it runs: what its hold still holds"),
});

/** GET /api/v1/crawl/{crawlId}: the crawl and a page of its URLs. */
export const crawlResponse = crawlSummaryResponse.extend({
  links_expire_in_seconds: z.number().int(),
  result_url: z
    .string()
    .optional()
    .describe(
      "once it has ended (seconds after): its whole result, every delivered page's output one JSON a line (NDJSON), signed for links_expire_in_seconds",
    ),
  pages: z.array(
    z.object({
      url: z.string(),
      status: z.enum(["queued", "running", "delivered", "skipped", "failed"]),
      reason: z.string().optional().describe("why it was skipped"),
      depth: z.number().int(),
      found_by: z.enum(["start", "sitemap", "link"]),
      final_url: z.string().optional(),
      http_status: z.number().int().optional(),
      rendered: z.boolean().optional().describe("whether a browser read it"),
      title: z.string().optional(),
      lastmod: z.string().optional(),
      charged_micro_usd: z.number().int().optional(),
      error: z.string().optional(),
      download_url: z.string().optional().describe("its output (JSON with the formats asked), signed for links_expire_in_seconds"),
    }),
  ),
  next_cursor: z.string().nullable().describe("the cursor of the next page of URLs, or null"),
});

/** GET /api/v1/crawl. */
export const crawlList = z.object({ crawls: z.array(crawlSummaryResponse) });

const box = z.object({ x: z.number().int(), y: z.number().int(), width: z.number().int(), height: z.number().int() });
const checkSummary = z.object({
  id: z.string(),
  at: z.string(),
  outcome: z.enum(["baseline", "unchanged", "changed", "failed"]),
  changedPercent: z.number().optional(),
});

/** A monitor (GET /api/v1/monitors/{id}): its request as given, and its state. */
export const monitorResponse = z
  .object({
    id: z.string(),
    url: z.string(),
    every: z.string(),
    mode: z.enum(["visual", "text", "both"]),
    threshold: z.object({ percent: z.number() }),
    status: z.enum(["active", "failing", "paused"]),
    paused_reason: z.enum(["requested", "insufficient_balance", "failing"]).optional(),
    created_at: z.string(),
    next_check_at: z.string().optional(),
    failures_in_a_row: z.number().int(),
    price_micro_usd_per_check: z.number().int(),
    baseline_at: z.string().optional(),
    last_check: checkSummary.optional(),
    last_change: checkSummary.extend({ thumbnailUrl: z.string().optional() }).optional(),
    first_check_id: z.string().optional(),
  })
  .loose();

/** GET /api/v1/monitors. */
export const monitorList = z.object({ monitors: z.array(monitorResponse) });

/** GET /api/v1/monitors/{id}/checks. */
export const monitorChecks = z.object({
  monitor_id: z.string(),
  history_days: z.number().int(),
  links_expire_in_seconds: z.number().int(),
  checks: z.array(
    z.object({
      id: z.string(),
      trigger: z.enum(["scheduled", "manual"]),
      status: z.enum(["queued", "running", "done"]),
      queued_at: z.string(),
      started_at: z.string().optional(),
      finished_at: z.string().optional(),
      outcome: z.enum(["baseline", "unchanged", "changed", "failed"]).optional(),
      changedPercent: z.number().optional(),
      boxes: z.array(box).optional(),
      images: z.object({ beforeUrl: z.string(), afterUrl: z.string(), diffUrl: z.string() }).optional(),
      text: z
        .object({
          added: z.array(z.string()),
          removed: z.array(z.string()),
          tooLarge: z.literal(true).optional().describe("the texts differ by more lines than the diff's budget: compared whole, no lines listed"),
        })
        .optional(),
      page: z.object({ url: z.string().nullable(), title: z.string(), incomplete: z.string().optional() }).optional(),
      charged_micro_usd: z.number().int(),
      error: z.object({ code: z.string(), message: z.string() }).optional(),
    }),
  ),
  next: z.string().nullable(),
});
