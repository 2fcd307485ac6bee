import { z } from "zod";
import {
  accountUpdateRequest,
  animateRequest,
  apiKeyRequest,
  autoTopupRequest,
  contentRequest,
  crawlRequest,
  htmlScreenshotRequest,
  jobRequest,
  mapRequest,
  metadataRequest,
  screenshotRequest,
  signingKeyRequest,
  signupRequest,
  topupRequest,
} from "../api/schemas.js";
import { formatUsd } from "../billing/money.js";
import { PRICES, type Route, routes } from "../routes.js";
import { monitorPatch, monitorRequest } from "./monitor-schemas.js";
import {
  animationEnvelope,
  apiKeyCreated,
  apiKeyList,
  autoTopupResponse,
  contentResponse,
  crawlList,
  crawlResponse,
  crawlSummaryResponse,
  errorBody,
  healthResponse,
  jobList,
  jobResponse,
  mapResponse,
  metadataResponse,
  monitorChecks,
  monitorList,
  monitorResponse,
  paymentRequiredBody,
  renderEnvelope,
  signingKeyCreated,
  signingKeyList,
  signupResponse,
  topupResponse,
  usageReport,
} from "./response-schemas.js";

// The OpenAPI 3.1 document (GET /openapi.json), made from the route table and the zod schemas of
// requests (lib/api/schemas.ts) and answers (lib/http/response-schemas.ts): one source of truth.
// Made once per process, when first asked for.

type Json = Record<string, unknown>;

/** A zod schema as JSON Schema (OpenAPI 3.1 is JSON Schema 2020-12): requests as a client sends them, answers as we send them. */
const schemaOf = (schema: z.ZodType, io: "input" | "output"): Json => {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as Json;
  return rest;
};

const jsonContent = (schema: z.ZodType, example?: unknown) => ({
  "application/json": { schema: schemaOf(schema, "output"), ...(example === undefined ? {} : { example }) },
});

const error = (description: string) => ({ description, content: jsonContent(errorBody) });

const IMAGE_TYPES = ["image/png", "image/jpeg", "image/webp", "image/avif", "application/pdf"];

/** Headers an agent can steer by (docs/agents.md), on every answer of a limited route. */
const STEERING = {
  "RateLimit-Policy": { description: 'IETF RateLimit: each limit\'s quota and window, e.g. `"caller";q=10;w=1`', schema: { type: "string" } },
  RateLimit: { description: 'IETF RateLimit: what is left and when the window ends, e.g. `"caller";r=9;t=1`', schema: { type: "string" } },
  "X-Charged-Micro-USD": { description: "What this request cost (0 when it failed)", schema: { type: "string" } },
  "X-Balance-Micro-USD": { description: "The API key's balance after this request", schema: { type: "string" } },
};

/** What every render answers. */
const renderResponses = {
  "200": {
    description: 'The output: its bytes (`responseFormat: "binary"`, the default) or the JSON envelope (`responseFormat: "json"`).',
    headers: {
      "X-Render-Ms": { description: "Time the render took", schema: { type: "integer" } },
      "X-Truncated": { description: "`true` when the page was cut at the capture limit", schema: { type: "string" } },
      "X-Cache": { description: "`HIT` or `MISS` when the request asked for the render cache (`cacheTtl`)", schema: { type: "string", enum: ["HIT", "MISS"] } },
      Age: { description: "On a cache hit: seconds since the output was stored", schema: { type: "integer" } },
      "X-Capture-Incomplete": {
        description: "`load-timeout` when the page's load event never came: captured as it stood at the page-load limit",
        schema: { type: "string" },
      },
      "X-Geo-Country": {
        description: 'With `geo: "auto"`: the country whose locale and time zone the page got, or `unknown`',
        schema: { type: "string" },
      },
      "X-Geo-Source": {
        description: 'With `geo: "auto"`: where that country was found: `country`, `proxy-credentials` or `none`',
        schema: { type: "string", enum: ["country", "proxy-credentials", "none"] },
      },
      "X-Har-Url": { description: "With `capture.har`: a link (1 hour) to the HAR 1.2 file of the page's requests", schema: { type: "string" } },
      "X-Console-Url": {
        description: "With `capture.console`: a link (1 hour) to the page's console messages and uncaught errors (JSON)",
        schema: { type: "string" },
      },
      "X-Network-Url": {
        description: "With `capture.network`: a link (1 hour) to the requests that failed, were blocked or still loaded (JSON)",
        schema: { type: "string" },
      },
      "PAYMENT-RESPONSE": { description: "x402 v2 settlement receipt (base64 JSON), when paid with x402", schema: { type: "string" } },
      ...STEERING,
    },
    content: {
      ...Object.fromEntries(IMAGE_TYPES.map((type) => [type, { schema: { type: "string", contentMediaType: type } }])),
      "application/json": { schema: schemaOf(renderEnvelope, "output") },
    },
  },
  "303": { description: "A binary output above 4 MB: `Location` is a presigned link (1 hour)", headers: { Location: { schema: { type: "string" } } } },
  "400": error("A field breaks its rule (the message names it)"),
  "401": error("The API key is invalid"),
  "402": {
    description:
      "Without `Authorization`: x402 payment details, v2 in the `PAYMENT-REQUIRED` header (with the bazaar discovery extension), v1 in the body. With a key: `INSUFFICIENT_BALANCE`.",
    headers: { "PAYMENT-REQUIRED": { description: "x402 v2 PaymentRequired, base64 JSON", schema: { type: "string" } } },
    content: { "application/json": { schema: { oneOf: [schemaOf(paymentRequiredBody, "output"), schemaOf(errorBody, "output")] } } },
  },
  "422": error(
    "The page could not be loaded (INVALID_URL), a selector matched nothing (SELECTOR_NOT_FOUND), or pdf.pageRanges selects no page (PAGE_RANGE_EMPTY)",
  ),
  "429": error("Too many requests (`Retry-After`)"),
  "500": error("The browser crashed (RENDER_ERROR) or another failure (INTERNAL_ERROR)"),
  "502": error("The request's `proxy` failed (PROXY_ERROR): refused, authentication failed, timed out or unreachable; nothing was charged"),
  "504": error("The page took too long (RENDER_TIMEOUT)"),
};

/** Safe retries for API-key requests (docs/agents.md). */
const IDEMPOTENCY_KEY = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description:
    "With an API key: a retry with the same key and body within 24 hours gets the first answer (`Idempotent-Replayed: true`) and is not charged again. 1 to 255 visible ASCII characters.",
  schema: { type: "string", minLength: 1, maxLength: 255 },
};

const PRICED = `${formatUsd(PRICES.screenshot)} a capture, ${formatUsd(PRICES.mockup)} with \`style: "mockup"\`; nothing when it fails`;

/** Each route's operation, by route id (the fallback is not an operation). */
/** A render's answers but the 303 of a large binary output (content answers JSON). */
const { "303": _redirect, ...withoutRedirect } = renderResponses;

const OPERATIONS: Record<string, Json> = {
  screenshot: {
    summary: "Screenshot a web page",
    description: `A URL captured as PNG, JPEG, WebP, AVIF or PDF, optionally framed as a mockup. ${PRICED}.`,
    parameters: [IDEMPOTENCY_KEY],
    requestBody: {
      required: true,
      content: {
        "application/json": {
          schema: schemaOf(screenshotRequest, "input"),
          examples: {
            fullPage: { value: { url: "https://example.com", fullPage: true, responseFormat: "json" } },
            mockup: { value: { url: "https://example.com", style: "mockup", frame: "laptop", format: "webp", responseFormat: "json" } },
          },
        },
      },
    },
    responses: renderResponses,
  },
  "html-to-screenshot": {
    summary: "Render raw HTML",
    description: `An HTML document (at most 500 KB) rendered as PNG, JPEG, WebP, AVIF or PDF. ${PRICED}.`,
    parameters: [IDEMPOTENCY_KEY],
    requestBody: {
      required: true,
      content: {
        "application/json": {
          schema: schemaOf(htmlScreenshotRequest, "input"),
          examples: { card: { value: { html: "<h1 style='font:64px sans-serif'>Hello</h1>", width: 800, height: 400, responseFormat: "json" } } },
        },
      },
    },
    responses: renderResponses,
  },
  content: {
    summary: "A page as content (Markdown, text, HTML)",
    description:
      "The main content of a page (as a reader view keeps it: no navigation, footers, banners, ads or share bars) or its whole body, as Markdown, plain text or cleaned HTML, with its metadata and, with `links`, its links. Text a reader cannot see is left out. Static HTML when it proves what a person sees (no scripts, styles it can evaluate), a browser otherwise (`render`) or when a page control needs one. The page controls of a screenshot apply. $0.002; with `screenshot` (the content and an image of the same page load) the price of that screenshot: $0.005, or $0.01 as a mockup.",
    parameters: [IDEMPOTENCY_KEY],
    requestBody: {
      required: true,
      content: {
        "application/json": {
          schema: schemaOf(contentRequest, "input"),
          examples: {
            markdown: { value: { url: "https://example.com", format: "markdown" } },
            links: { value: { url: "https://example.com", format: "text", scope: "page", links: true } },
            snapshot: { value: { url: "https://example.com", screenshot: { width: 1280, format: "webp" }, blockCookieBanners: true } },
          },
        },
      },
    },
    responses: {
      ...withoutRedirect,
      "200": { description: "The content", content: jsonContent(contentResponse) },
      "422": error("The page could not be loaded, or is not HTML (INVALID_URL)"),
    },
  },
  animate: {
    summary: "Record a page scrolling (MP4, WebM, GIF, WebP)",
    description: `A URL or an HTML document, loaded as a full-page screenshot is, then scrolled from its top to \`scroll.to\` (its bottom by default, an element's top, or a length) over \`duration\` seconds at \`fps\`, with an easing and holds, and with \`back\` to the top again: as MP4 (H.264), WebM (VP9), GIF or animated WebP. Frames are \`width\` x \`height\` CSS px at \`deviceScaleFactor\` (1 by default). \`mode: "synthetic"\` (the default) cuts every frame from one tall capture; \`"live"\` scrolls the page for real and runs only in a job. The page controls of a screenshot apply. ${formatUsd(PRICES.animate)} a call; nothing when it fails.`,
    parameters: [IDEMPOTENCY_KEY],
    requestBody: {
      required: true,
      content: {
        "application/json": {
          schema: schemaOf(animateRequest, "input"),
          examples: {
            mp4: { value: { url: "https://example.com", format: "mp4", duration: 5 } },
            gif: { value: { url: "https://example.com", format: "gif", width: 640, height: 400, scroll: { easing: "linear", holdEnd: 1000, back: true } } },
          },
        },
      },
    },
    responses: {
      ...renderResponses,
      "200": {
        description: 'The file (`responseFormat: "binary"`, the default) or the JSON envelope (`responseFormat: "json"`).',
        headers: {
          "X-Render-Ms": renderResponses["200"].headers["X-Render-Ms"],
          "X-Frames": { description: "Frames in the file", schema: { type: "integer" } },
          "X-Duration-Ms": { description: "How long it plays: frames / fps", schema: { type: "integer" } },
          "PAYMENT-RESPONSE": renderResponses["200"].headers["PAYMENT-RESPONSE"],
          ...STEERING,
        },
        content: {
          ...Object.fromEntries(
            ["video/mp4", "video/webm", "image/gif", "image/webp"].map((type) => [type, { schema: { type: "string", contentMediaType: type } }]),
          ),
          "application/json": { schema: schemaOf(animationEnvelope, "output") },
        },
      },
      "422": error("The page could not be loaded (INVALID_URL), or scroll.to or another selector matched nothing (SELECTOR_NOT_FOUND)"),
    },
  },
  "signed-screenshot": {
    summary: "Screenshot by signed link (for <img src>)",
    description: `A GET link signed with one of the account's signing keys (docs/api.md, "Signed links"), charged to it like a POST. Every render field of POST /api/v1/screenshot is a query parameter (numbers and booleans as they are written, objects and lists as JSON text). \`signature\` is the lower-case hex HMAC-SHA256, with the signing secret, of every other parameter sorted by name, each \`name=value\` RFC 3986-encoded, joined with "&". With \`cacheTtl\` the answer is cached (and cacheable by a CDN) that long. Its answers carry none of the steering headers (balance, charge, rate limits): whoever holds the link learns nothing of its owner. ${PRICED}.`,
    parameters: [
      { name: "url", in: "query", required: true, schema: { type: "string" }, description: "The page" },
      { name: "keyId", in: "query", required: true, schema: { type: "string" }, description: "The signing key's id" },
      {
        name: "expires",
        in: "query",
        required: true,
        schema: { type: "string", pattern: "^[0-9]+$" },
        description: "Unix seconds after which the link is refused",
      },
      {
        name: "signature",
        in: "query",
        required: true,
        schema: { type: "string", pattern: "^[0-9a-f]{64}$" },
        description: "HMAC-SHA256 of the canonical query",
      },
    ],
    responses: {
      "200": renderResponses["200"],
      "400": error("A render field is not valid"),
      "403": error("INVALID_SIGNATURE (tampered, unknown or revoked key) or LINK_EXPIRED"),
      "422": error("The page could not be captured"),
      "429": error("Too many requests, or the key's daily limit is reached (DAILY_LIMIT_REACHED)"),
      "504": error("The render ran out of time"),
    },
  },
  "signing-keys-create": {
    summary: "Create a signing key",
    description:
      "A key for signed links, with an optional daily limit on what its links are charged (429 DAILY_LIMIT_REACHED past it, until 00:00 UTC). Its secret is in this answer only; at most 20 keys per account (409 TOO_MANY_SIGNING_KEYS).",
    requestBody: { required: false, content: { "application/json": { schema: schemaOf(signingKeyRequest, "input"), example: { dailyLimitCents: 500 } } } },
    responses: {
      "201": { description: "The key and its secret", content: jsonContent(signingKeyCreated) },
      "400": error("The daily limit is not a whole number of cents from 1 to 1,000,000"),
      "401": error("A key is required"),
      "409": error("Too many keys"),
    },
  },
  "signing-keys-list": {
    summary: "List signing keys",
    responses: { "200": { description: "The account's keys, no secrets", content: jsonContent(signingKeyList) }, "401": error("A key is required") },
  },
  "signing-keys-revoke": {
    summary: "Revoke a signing key",
    description: "Links signed with it are refused (403 INVALID_SIGNATURE) from now on.",
    parameters: [{ name: "keyId", in: "path", required: true, schema: { type: "string" } }],
    responses: {
      "200": {
        description: "Revoked",
        content: { "application/json": { schema: { type: "object", properties: { keyId: { type: "string" }, revoked: { const: true } } } } },
      },
      "401": error("A key is required"),
      "404": error("The account has no such key"),
    },
  },
  "api-keys-create": {
    summary: "Create an API key",
    description:
      "Another key for the same account and balance, optionally named. The key is in this answer only; at most 10 keys per account (409 TOO_MANY_API_KEYS).",
    requestBody: { required: false, content: { "application/json": { schema: schemaOf(apiKeyRequest, "input"), example: { name: "CI" } } } },
    responses: {
      "201": { description: "The key, this once, and its listing", content: jsonContent(apiKeyCreated) },
      "400": error("The name is not 1 to 64 characters"),
      "401": error("A key is required"),
      "409": error("Too many keys"),
    },
  },
  "api-keys-list": {
    summary: "List API keys",
    responses: {
      "200": { description: "The account's keys: id, name, first and last characters, created, last used", content: jsonContent(apiKeyList) },
      "401": error("A key is required"),
    },
  },
  "api-keys-revoke": {
    summary: "Revoke an API key",
    description: "It answers 401 within 5 seconds everywhere. The account's last key cannot be revoked (409 LAST_API_KEY).",
    parameters: [{ name: "keyId", in: "path", required: true, schema: { type: "string" } }],
    responses: {
      "200": {
        description: "Revoked",
        content: { "application/json": { schema: { type: "object", properties: { id: { type: "string" }, revoked: { const: true } } } } },
      },
      "401": error("A key is required"),
      "404": error("The account has no such key"),
      "409": error("The account's last key"),
    },
  },
  "jobs-create": {
    summary: "Submit a job (async, up to 100 items)",
    description:
      "Up to 100 request bodies of one endpoint (`screenshot`, `html-to-screenshot`, `content` or `animate`), each with an optional `timeout`: its page-load limit in seconds, up to 90 (default 30). Every item is validated before anything is queued (a bad one is a 400 naming its index). Each item is charged as its endpoint would be when it starts, refunded if it fails; a cancelled item is never charged. API key only. Results and outputs are kept 7 days.",
    requestBody: {
      required: true,
      content: {
        "application/json": {
          schema: schemaOf(jobRequest, "input"),
          example: { endpoint: "screenshot", items: [{ url: "https://example.com" }, { url: "https://example.org", fullPage: true, timeout: 60 }] },
        },
      },
    },
    responses: {
      "202": { description: "Queued: the job as GET shows it; `Location` is its address", content: jsonContent(jobResponse) },
      "400": error("An item (named by its index) or the job breaks a rule"),
      "401": error("A key is required"),
      "429": error("Too many requests (`Retry-After`)"),
    },
  },
  "crawl-create": {
    summary: "Crawl a site (async)",
    description: `A site read page by page from its start: its sitemaps and its pages' links, breadth first, \`depth\` hops at most, normalised, in scope (the start's host, \`subdomains\`, \`include\` and \`exclude\` globs) and allowed by robots.txt, until \`limit\` pages are delivered. Each page is read over HTTP, or in a browser when its static HTML cannot prove what a person sees (\`render\`), and kept in the \`formats\` asked. Polite: robots.txt (product token Shotline), Crawl-delay, Retry-After, two requests in flight per host. ${formatUsd(PRICES.crawlPage)} a page read statically, ${formatUsd(PRICES.crawlRenderedPage)} rendered; skipped, duplicate and failed pages are free. \`limit\` pages at ${formatUsd(PRICES.crawlRenderedPage)} are held until it ends. API key only; kept 7 days.`,
    requestBody: {
      required: true,
      content: {
        "application/json": {
          schema: schemaOf(crawlRequest, "input"),
          example: { url: "https://example.com/docs/", limit: 200, include: ["https://example.com/docs/**"], formats: ["markdown", "links"] },
        },
      },
    },
    responses: {
      "202": { description: "Running: the crawl as GET lists it; `Location` is its address", content: jsonContent(crawlSummaryResponse) },
      "400": error("A field breaks its rule, or the start is a private address"),
      "401": error("A key is required"),
      "402": error("The balance cannot hold `limit` pages at a rendered page's price (INSUFFICIENT_BALANCE)"),
      "429": error("Too many requests (`Retry-After`)"),
    },
  },
  "crawl-list": {
    summary: "List crawls",
    responses: {
      "200": { description: "The account's newest 20 crawls, newest first", content: jsonContent(crawlList) },
      "401": error("A key is required"),
    },
  },
  "crawl-get": {
    summary: "A crawl: its status, counts and pages",
    description:
      "Its status (`running`, `completed`, `cancelled`), counts, what it was charged, and a page of its URLs (`limit`, up to 1,000; `cursor` from `next_cursor`), each with what became of it (`delivered`, `skipped` with a reason, `failed`) and its output behind a link signed now.",
    parameters: [
      { name: "crawlId", in: "path", required: true, schema: { type: "string" } },
      { name: "limit", in: "query", required: false, schema: { type: "integer", minimum: 1, maximum: 1000, default: 100 } },
      { name: "cursor", in: "query", required: false, schema: { type: "string" } },
    ],
    responses: {
      "200": { description: "The crawl", content: jsonContent(crawlResponse) },
      "400": error("`limit` or `cursor` is invalid"),
      "401": error("A key is required"),
      "404": error("No such crawl for this account (crawls are kept 7 days)"),
    },
  },
  "crawl-cancel": {
    summary: "Cancel a crawl",
    description: "No page is sent after it; pages running end as they would (charged when delivered); then what its hold still holds goes back.",
    parameters: [{ name: "crawlId", in: "path", required: true, schema: { type: "string" } }],
    responses: {
      "200": { description: "The crawl as it now is", content: jsonContent(crawlResponse) },
      "401": error("A key is required"),
      "404": error("No such crawl for this account"),
    },
  },
  "jobs-list": {
    summary: "List jobs",
    responses: {
      "200": { description: "The account's newest 20 jobs, newest first", content: jsonContent(jobList) },
      "401": error("A key is required"),
    },
  },
  "jobs-get": {
    summary: "A job: its status and each item's result",
    description:
      "Each item's status (`queued`, `running`, `succeeded`, `failed`, `cancelled`), what it was charged, and its result (the synchronous endpoint's JSON envelope, the output behind a link signed now, for an hour) or error.",
    parameters: [{ name: "jobId", in: "path", required: true, schema: { type: "string" } }],
    responses: {
      "200": { description: "The job", content: jsonContent(jobResponse) },
      "401": error("A key is required"),
      "404": error("No such job for this account (jobs are kept 7 days)"),
    },
  },
  "jobs-cancel": {
    summary: "Cancel a job",
    description: "Items that have not started are cancelled (never charged); those running end as they would.",
    parameters: [{ name: "jobId", in: "path", required: true, schema: { type: "string" } }],
    responses: {
      "200": { description: "The job as it now is", content: jsonContent(jobResponse) },
      "401": error("A key is required"),
      "404": error("No such job for this account"),
    },
  },
  "monitors-create": {
    summary: "Watch a page (a monitor)",
    description:
      "A page checked every `every` (5 minutes to a day): captured as `/screenshot` takes its options (PNG, 1x by default) and read as `/content` reads it, compared with its baseline (the capture and text at the last change reported, or the first check). Rows of pixels are aligned before they are compared, so a block inserted reports that block, not the page below it. `ignoreSelectors` are hidden in place, `ignoreText` (RE2 patterns, linear time) hidden with their element and taken out of the text; a check is `changed` when the changed share passes `threshold.percent` (visual) or a line changed (text). Each check is charged when it runs: a screenshot's price ($0.005), or content's ($0.002) in mode `text`; a failed check is free. The first check (the baseline) is queued at once. At most 500 monitors an account; `monitor.changed`, `monitor.failed` and `monitor.paused` go to `webhookUrl`, signed as job webhooks are.",
    requestBody: {
      required: true,
      content: {
        "application/json": {
          schema: schemaOf(monitorRequest, "input"),
          example: { url: "https://example.com/pricing", every: "1h", mode: "both", ignoreSelectors: [".clock"], threshold: { percent: 0.5 } },
        },
      },
    },
    responses: {
      "201": { description: "The monitor as GET shows it, with `first_check_id`; `Location` is its address", content: jsonContent(monitorResponse) },
      "400": error("A field breaks a rule (named), or the webhook URL is refused"),
      "401": error("A key is required"),
      "409": error("TOO_MANY_MONITORS: the account has 500"),
    },
  },
  "monitors-list": {
    summary: "List monitors",
    responses: {
      "200": { description: "The account's monitors, oldest first", content: jsonContent(monitorList) },
      "401": error("A key is required"),
    },
  },
  "monitors-get": {
    summary: "A monitor: what it watches, its state, last check and last change",
    description:
      "`status` is `active`, `failing` (its last checks failed) or `paused` (`paused_reason`: `requested`, `insufficient_balance`, or `failing`: 10 checks in a row failed). `last_change.thumbnailUrl` is a small WebP of the change, signed for an hour; `webhook.deliveries` its recent events.",
    parameters: [{ name: "monitorId", in: "path", required: true, schema: { type: "string" } }],
    responses: {
      "200": { description: "The monitor", content: jsonContent(monitorResponse) },
      "401": error("A key is required"),
      "404": error("No such monitor for this account"),
    },
  },
  "monitors-update": {
    summary: "Pause, resume or change a monitor",
    description:
      '`{"paused": true}` pauses it (nothing runs), `false` resumes it (a check is due at once). Any other field changes it, the whole validated again; `null` removes `name` or `webhookUrl`. A change of what it watches (its URL, mode, capture options, ignored parts) makes its next check a new baseline.',
    parameters: [{ name: "monitorId", in: "path", required: true, schema: { type: "string" } }],
    requestBody: { required: true, content: { "application/json": { schema: schemaOf(monitorPatch, "input"), example: { paused: true } } } },
    responses: {
      "200": { description: "The monitor as it now is", content: jsonContent(monitorResponse) },
      "400": error("A field breaks a rule (named)"),
      "401": error("A key is required"),
      "404": error("No such monitor for this account"),
    },
  },
  "monitors-delete": {
    summary: "Delete a monitor",
    description: "No more checks; its baseline is deleted now, its history expires 30 days after each check.",
    parameters: [{ name: "monitorId", in: "path", required: true, schema: { type: "string" } }],
    responses: {
      "200": {
        description: "Deleted",
        content: { "application/json": { schema: { type: "object", properties: { id: { type: "string" }, deleted: { const: true } } } } },
      },
      "401": error("A key is required"),
      "404": error("No such monitor for this account"),
    },
  },
  "monitors-check": {
    summary: "Check a monitor now",
    description: "Queues a check besides the schedule, in the account's share of the workers; charged when it runs. Its outcome is in `GET .../checks`.",
    parameters: [{ name: "monitorId", in: "path", required: true, schema: { type: "string" } }],
    responses: {
      "202": {
        description: "Queued",
        content: {
          "application/json": {
            schema: { type: "object", properties: { monitor_id: { type: "string" }, check_id: { type: "string" }, status: { const: "queued" } } },
          },
        },
      },
      "401": error("A key is required"),
      "404": error("No such monitor for this account"),
      "409": error("MONITOR_PAUSED: resume it first"),
    },
  },
  "monitors-checks": {
    summary: "A monitor's checks",
    description:
      "Newest first, `limit` (1 to 100, default 20) at a time; `next` is the `before` of the next page. Each: `outcome` (`baseline`, `unchanged`, `changed`, `failed`), `changedPercent`, `boxes` (the changed regions in the new capture's CSS px), `text` (lines added and removed), links to the `before`, `after` and `diff` images (a change's; signed for an hour), what it was charged, or its error. Kept 30 days.",
    parameters: [
      { name: "monitorId", in: "path", required: true, schema: { type: "string" } },
      { name: "limit", in: "query", required: false, schema: { type: "integer", minimum: 1, maximum: 100, default: 20 } },
      { name: "before", in: "query", required: false, schema: { type: "string" } },
    ],
    responses: {
      "200": { description: "The checks", content: jsonContent(monitorChecks) },
      "400": error("A bad limit or cursor"),
      "401": error("A key is required"),
      "404": error("No such monitor for this account"),
    },
  },
  "webhook-secret": {
    summary: "Create or rotate the webhook secret",
    description:
      "The secret (Standard Webhooks' `whsec_` form) that signs the account's job webhooks: `webhook-signature` is `v1,` and the base64 HMAC-SHA256, with the secret's decoded bytes, of `webhook-id.webhook-timestamp.body`. Shown in this answer only; a new one replaces the old at once. A job with `webhookUrl` needs one.",
    responses: {
      "201": {
        description: "The secret, this once",
        content: { "application/json": { schema: { type: "object", properties: { secret: { type: "string", pattern: "^whsec_" } }, required: ["secret"] } } },
      },
      "401": error("A key is required"),
    },
  },
  "verify-email": {
    summary: "Verify a signup's address (the mailed link)",
    description:
      "The link a signup's verification mail carries, for a person to open: an HTML page. Followed once within 7 days, it credits the signup bonus unless the address has had it.",
    parameters: [{ name: "token", in: "query", required: true, schema: { type: "string", pattern: "^[A-Za-z0-9_-]{43}$" } }],
    responses: {
      "200": { description: "Verified (with the bonus, or without: the address had it)", content: { "text/html": { schema: { type: "string" } } } },
      "400": error("Not a token this service mails"),
      "404": { description: "Used, expired or unknown", content: { "text/html": { schema: { type: "string" } } } },
    },
  },
  output: {
    summary: "A stored output",
    description:
      "Where an MCP tool's `downloadUrl` points: a redirect (303) to a link into storage that lives five minutes. The name is the credential; an output is kept for a day after its render.",
    parameters: [
      { name: "day", in: "path", required: true, schema: { type: "string" } },
      { name: "file", in: "path", required: true, schema: { type: "string" } },
    ],
    responses: {
      "303": { description: "The output, at the Location header" },
      "404": error("No such output, or no longer kept"),
    },
  },
  map: {
    summary: "A site's URLs",
    description: `The URLs of a site, in seconds, without reading their content: from its sitemaps (those robots.txt names, and /sitemap.xml; indexes and .xml.gz files followed) and the links of its start page and a few pages it links to. Each URL normalised (no fragment, tracking or session parameters), on the start's host (\`subdomains\` for the hosts under it), matching \`include\` and no \`exclude\` glob, allowed by robots.txt for the product token Shotline. ${formatUsd(PRICES.map)} a call; nothing when the site cannot be read.`,
    parameters: [IDEMPOTENCY_KEY],
    requestBody: {
      required: true,
      content: {
        "application/json": {
          schema: schemaOf(mapRequest, "input"),
          examples: { docs: { value: { url: "https://example.com", limit: 500, include: ["https://example.com/docs/**"] } } },
        },
      },
    },
    responses: {
      ...withoutRedirect,
      "200": { description: "The site's URLs", content: jsonContent(mapResponse) },
      "422": error("The start page could not be loaded and no sitemap was found, or robots.txt could not be read (INVALID_URL)"),
    },
  },
  metadata: {
    summary: "Page metadata",
    description:
      "Title, description, social tags, image size and alt text, favicon, logo, theme colour, language, canonical URL, site name, author, dates and feeds of a page. Free.",
    requestBody: { required: true, content: { "application/json": { schema: schemaOf(metadataRequest, "input"), example: { url: "https://example.com" } } } },
    responses: {
      "200": { description: "The page's metadata", content: jsonContent(metadataResponse) },
      "400": error("Invalid body"),
      "422": error("The page could not be loaded"),
      "429": error("Too many requests"),
    },
  },
  usage: {
    summary: "Balance and recent usage",
    description: "The calling key's account: balance, total spent, auto-top-up, the latest ledger entries.",
    responses: { "200": { description: "The usage report", content: jsonContent(usageReport) }, "401": error("A key is required") },
  },
  health: {
    summary: "Liveness",
    responses: { "200": { description: "The service answers", content: jsonContent(healthResponse, { status: "ok", version: "0.1.0" }) } },
  },
  signup: {
    summary: "Create an account",
    description:
      "A new account and its API key, shown once, in this answer; the key works at once. Every signup makes an account and answers alike, whether or not the address has one. The signup bonus is one per address: credited now, or (where verification is on) when the link mailed to the address is followed.",
    requestBody: { required: true, content: { "application/json": { schema: schemaOf(signupRequest, "input"), example: { email: "you@example.com" } } } },
    responses: {
      "201": { description: "The new account and its key", content: jsonContent(signupResponse) },
      "400": error("Invalid email"),
      "429": error("Too many signups"),
    },
  },
  account: {
    summary: "Account settings",
    description:
      "`auto_topup_enabled`: false turns auto-topup off; true turns a configuration back on (after a pause, or after it was turned off). Without a configuration, true is a 400 that says to PUT /api/v1/auto-topup.",
    requestBody: {
      required: true,
      content: { "application/json": { schema: schemaOf(accountUpdateRequest, "input"), example: { auto_topup_enabled: false } } },
    },
    responses: {
      "200": { description: "The usage report", content: jsonContent(usageReport) },
      "400": error("Invalid body"),
      "401": error("A key is required"),
    },
  },
  "auto-topup-get": {
    summary: "Auto-topup: the configuration and what to grant",
    description:
      "The account's auto-topup (null when off), and the top-up address (`spender`), USDC contract (`token`), network and chain id to grant an allowance on; `allowance_micro_usd` is what the chain shows for the configured payer.",
    responses: { "200": { description: "The configuration", content: jsonContent(autoTopupResponse) }, "401": error("A key is required") },
  },
  "auto-topup-set": {
    summary: "Auto-topup: turn on or change",
    description:
      "Whenever a charge leaves the balance below `threshold_cents`, the service pulls `amount_cents` (at least $5) of USDC from `payer` through the allowance it granted `spender`, never more than `monthly_cap_cents` in a calendar month (UTC). Every PUT proves the caller controls `payer`: `permit` (EIP-2612, signed by `payer` for `spender`; submitted on chain by the service, which pays the gas, only when it raises the allowance and `payer` holds at least one top-up, at most 3 a day per account and per payer) or `authorization` (the payer's EIP-712 signature of this account's id, `spender` and a deadline less than a day away: docs/api.md, \"Auto-topup\"), for a payer that already approved `spender`. The first account to prove a payer holds it until DELETE; another is 409 PAYER_TAKEN. After 3 failed pulls in a row it pauses until it is set again.",
    requestBody: {
      required: true,
      content: {
        "application/json": {
          schema: schemaOf(autoTopupRequest, "input"),
          example: {
            threshold_cents: 100,
            amount_cents: 500,
            monthly_cap_cents: 2000,
            payer: "0x1111111111111111111111111111111111111111",
            authorization: { deadline: 1795000000, signature: `0x${"ab".repeat(65)}` },
          },
        },
      },
    },
    responses: {
      "200": { description: "On, as configured", content: jsonContent(autoTopupResponse) },
      "400": error(
        "Invalid settings, no proof of the payer, a permit or authorization that is expired, not the payer's or refused, or an allowance below the amount",
      ),
      "401": error("A key is required"),
      "409": error("PAYER_TAKEN: another account holds this payer"),
      "429": error("More than 3 permits submitted today for this account or payer"),
    },
  },
  "auto-topup-delete": {
    summary: "Auto-topup: turn off",
    description:
      "A pull already sent is still credited. The payer is let go, so another account may prove and bind it. The allowance stays on chain: revoking it there is the customer's final word.",
    responses: { "200": { description: "Off", content: jsonContent(autoTopupResponse) }, "401": error("A key is required") },
  },
  topup: {
    summary: "Top up the balance with USDC (x402)",
    description: "Pays `amount_cents` with x402 (the 402 quotes it); the balance is credited (200) or, while the transfer is mined, later (202).",
    requestBody: { required: true, content: { "application/json": { schema: schemaOf(topupRequest, "input"), example: { amount_cents: 500 } } } },
    responses: {
      "200": { description: "Credited", content: jsonContent(topupResponse) },
      "202": { description: "Paid, credited once the transfer is confirmed", content: jsonContent(topupResponse) },
      "400": error("Invalid amount"),
      "401": error("A key is required"),
      "402": { description: "The x402 payment details for the amount", content: { "application/json": { schema: schemaOf(paymentRequiredBody, "output") } } },
    },
  },
  dashboard: {
    summary: "The customer dashboard (HTML)",
    responses: { "200": { description: "The page", content: { "text/html": { schema: { type: "string" } } } } },
  },
  "x402-manifest": {
    summary: "x402 discovery manifest",
    responses: { "200": { description: "Every paid route, its price and input schema", content: { "application/json": { schema: { type: "object" } } } } },
  },
  "llms-txt": { summary: "A guide for agents", responses: { "200": { description: "Markdown", content: { "text/plain": { schema: { type: "string" } } } } } },
  openapi: { summary: "This document", responses: { "200": { description: "OpenAPI 3.1", content: { "application/json": { schema: { type: "object" } } } } } },
  mcp: {
    summary: "The MCP server (Streamable HTTP, stateless)",
    description:
      'Model Context Protocol over HTTP: one JSON-RPC message per POST, answered as JSON (send `Accept: application/json, text/event-stream`). Tools: `screenshot`, `html_to_screenshot`, `animate`, `read_page`, `scrape`, `metadata`, `usage`; each call is authorised, limited and charged as its REST route (`Authorization: Bearer`, or x402 in `_meta["x402/payment"]`). See docs/agents.md.',
    requestBody: { required: true, content: { "application/json": { schema: { type: "object", description: "A JSON-RPC 2.0 request or notification" } } } },
    responses: {
      "200": { description: "The JSON-RPC response", content: { "application/json": { schema: { type: "object" } } } },
      "202": { description: "A notification, accepted" },
      "400": { description: "Not a JSON object, or not a valid JSON-RPC message", content: { "application/json": { schema: { type: "object" } } } },
      "403": { description: "A browser Origin other than this host", content: { "application/json": { schema: { type: "object" } } } },
      "406": {
        description: "The Accept header does not list application/json and text/event-stream",
        content: { "application/json": { schema: { type: "object" } } },
      },
    },
  },
  docs: { summary: "The API reference (HTML)", responses: { "200": { description: "The page", content: { "text/html": { schema: { type: "string" } } } } } },
};

/** Who may call a route, as OpenAPI security requirements. */
const SECURITY: Record<Route["access"], Json[]> = {
  priced: [{ apiKey: [] }, { x402: [] }],
  key: [{ apiKey: [] }],
  public: [{}, { apiKey: [] }],
  open: [{}],
  signed: [{ signedLink: [] }],
};

let document: Json | undefined;

/** The OpenAPI document for `origin`. */
export function openApiDocument(origin: string, version: string): Json {
  document ??= {
    openapi: "3.1.0",
    info: {
      title: "Shotline",
      version,
      summary: "Screenshots, PDFs and mockups of web pages and HTML, and page metadata; pay per call with an API key or x402.",
      license: { name: "MIT", identifier: "MIT" },
    },
    paths: Object.fromEntries(
      Object.entries(
        Object.groupBy(
          routes.filter((route) => route.method && route.path && OPERATIONS[route.id]),
          (route) => route.path!,
        ),
      ).map(([path, rows]) => [
        path,
        Object.fromEntries(
          (rows ?? []).map((route) => [route.method!.toLowerCase(), { operationId: route.id, ...OPERATIONS[route.id], security: SECURITY[route.access] }]),
        ),
      ]),
    ),
    components: {
      securitySchemes: {
        apiKey: { type: "http", scheme: "bearer", description: "`Authorization: Bearer <API key>` (POST /api/v1/signup gives one)" },
        signedLink: {
          type: "apiKey",
          in: "query",
          name: "signature",
          description: 'A signed link: keyId, expires and signature in the query (docs/api.md, "Signed links")',
        },
        x402: {
          type: "apiKey",
          in: "header",
          name: "PAYMENT-SIGNATURE",
          description: "x402 v2 payment (base64 JSON), as the 402's PAYMENT-REQUIRED header asks; `X-PAYMENT` for x402 v1",
        },
      },
    },
  };
  return { ...document, servers: [{ url: origin }] };
}
