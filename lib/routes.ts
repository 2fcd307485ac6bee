// THE route table. stacks/Api.ts turns each row into an API Gateway route + one Lambda, dev/server.ts
// serves the same rows on a Node HTTP server by calling the same handlers, and lib/http applies each
// row's policy (access, rate limits, price, caching, timeout code). A route's policy lives in its
// row, never in an `if (route.id === ...)`. This module imports nothing: the stacks read it too.

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/**
 * Who may call a route: "priced" (an API key is charged per request, or, without Authorization, an
 * x402 payment), "key" (API key only), "public" (anyone; rate-limited per key or IP), "open"
 * (anyone, no limit, touches nothing; the MCP route's tool calls apply their own routes' access),
 * "signed" (a GET link signed with an account's signing key: charged to it like a key; docs/api.md, "Signed links").
 */
export type Access = "priced" | "signed" | "key" | "public" | "open";

/**
 * Rate limits a route counts against (lib/http/access.ts maps them to configuration): "caller" is
 * the per-second limit of the key, the x402 payer, or the client IP without either; "signup-ip" is
 * the hourly limit of account creations per client IP.
 */
export type RateLimit = "caller" | "signup-ip";

/** What a function may touch; stacks/Api.ts grants and configures exactly these. */
/**
 * What a function uses besides its code, each granted by the stack (stacks/Api.ts): the table, the
 * bucket, x402's settings, the dashboard's files, the verification mail; and for auto-topup
 * (lib/payments/auto-topup.ts) its offer (the top-up address), its launch (invoking the worker) and
 * its key (the secret that sends pulls and permits); the jobs queue (sending a job's items: lib/jobs);
 * the secrets key (sealing and opening the secrets a job's item or a monitor keeps: lib/storage/sealed.ts).
 */
export type Use =
  | "table"
  | "bucket"
  | "x402"
  | "dashboard-files"
  | "mail"
  | "auto-topup-offer"
  | "auto-topup-launch"
  | "auto-topup-key"
  | "jobs-queue"
  | "webhooks-queue"
  | "secrets";

/** Prices in micro-USD (1 USD = 1,000,000 = USDC atomic units), the one place they are written. */
export const PRICES = {
  /** A standard screenshot (PNG, JPEG, PDF), URL or HTML: $0.005. */
  screenshot: 5_000,
  /** A mockup (`style: "mockup"`): $0.01. */
  mockup: 10_000,
  /** A page as content (POST /api/v1/content): $0.002. */
  content: 2_000,
  /** A page as a moving picture (POST /api/v1/animate): $0.02, up to 30 s. */
  animate: 20_000,
  /** A site's URLs (POST /api/v1/map): $0.001 a call. */
  map: 1_000,
  /** A crawl's page read from its static HTML (POST /api/v1/crawl): $0.001. */
  crawlPage: 1_000,
  /** A crawl's page a browser rendered: $0.002, a content call's price. */
  crawlRenderedPage: 2_000,
} as const;

/**
 * Renders one caller (an account, or an x402 payer) may have in flight at once, across every route
 * that holds a render slot (docs/api.md, "Limits"): eight of a pool of hundreds of render functions,
 * so that no account can take the capacity every account shares.
 */
export const RENDERS_IN_FLIGHT = 8;
/** The most an operator may raise one account's renders in flight to (`npm run admin -- limit`): a slot taken tries at most 16 of them. */
export const MAX_RENDERS_IN_FLIGHT = 1_000;

/** How a priced route's price follows from its request body. */
export interface PriceRule {
  readonly standard: number;
  /** Applies when the body says `style: "mockup"`. */
  readonly mockup: number;
  /** Applies when the body asks for a `screenshot` too (a content snapshot): that screenshot's price, by its own fields. */
  readonly withScreenshot?: PriceRule;
}

/** The price of a request to a route with `rule`, in micro-USD. */
export const priceOf = (rule: PriceRule, body: unknown): number => {
  const { style, screenshot } = (typeof body === "object" && body !== null ? body : {}) as { style?: unknown; screenshot?: unknown };
  if (rule.withScreenshot && screenshot !== undefined && screenshot !== false) return priceOf(rule.withScreenshot, screenshot);
  return style === "mockup" ? rule.mockup : rule.standard;
};

/** One row of the table. */
export interface Route {
  /** Stable id; also the handler file: functions/<id>.ts exporting `handler`. */
  readonly id: string;
  /** Null only for the $default catch-all. */
  readonly method: HttpMethod | null;
  readonly path: string | null;
  /** Lambda memory in MB. */
  readonly memoryMB: number;
  /** Lambda timeout in seconds. */
  readonly timeoutSeconds: number;
  readonly access: Access;
  /** Set exactly on "priced" and "signed" routes. */
  readonly price: PriceRule | null;
  readonly limits: readonly RateLimit[];
  /** Needs the Chromium layer, the fonts and autoconsent's files. */
  readonly browser: boolean;
  readonly uses: readonly Use[];
  /** Answers carry `Cache-Control: no-store` (keys, balances, payments) unless the handler says otherwise (a signed link's cacheable render). */
  readonly noStore: boolean;
  /** The error code when the request runs out of time: a render's, or the generic one. */
  readonly timeoutCode: "RENDER_TIMEOUT" | "TIMEOUT";
  /** The route's cap (free routes), so that it can never take the capacity of paid renders; null: none (priced routes). */
  readonly cap: Cap | null;
  /**
   * The request holds one of its caller's render slots while it runs: an account (or an x402 payer)
   * has at most RENDERS_IN_FLIGHT renders at once, whatever route (or MCP tool) they come through;
   * past them, 429 before any work or charge.
   */
  readonly holds?: "render";
  /**
   * Its rate limits are counted while the work runs rather than before (a free route that only
   * reads: metadata). Over a limit the work is aborted and the answer is 429 all the same.
   */
  readonly countsWhileWorking?: true;
}

/**
 * A cap on a route, at both layers: at most `concurrency` instances of its Lambda at once (reserved
 * concurrency, which also sets them aside for it) and `rate` requests per second with bursts of
 * `burst` at API Gateway (route throttling; over it the gateway answers 429).
 */
export interface Cap {
  readonly concurrency: number;
  readonly rate: number;
  readonly burst: number;
}

// Free routes' caps (docs/api.md, "Capacity"). Their reserved concurrency adds up to 97 of an
// account's 1,000 by default, leaving the rest (less the 100 Lambda keeps unreserved) to renders.
const LIGHT_CAP: Cap = { concurrency: 4, rate: 20, burst: 40 };
// Documents made once per container (the dashboard, the API's descriptions), answered in
// milliseconds and cached by browsers and the CDN for minutes: one at a time answers a hundred a second.
const DOCUMENT_CAP: Cap = { concurrency: 1, rate: 20, burst: 40 };
// 404s and 405s: a few milliseconds each, so two at once answer hundreds a second.
const FALLBACK_CAP: Cap = { concurrency: 2, rate: 20, burst: 40 };
// An account's keys and auto-topup: set up now and then, by a person or a script.
const MANAGE_CAP: Cap = { concurrency: 2, rate: 5, burst: 10 };
// Jobs (docs/api.md, "Jobs"): submitted (a second or so each) and polled by scripts; listing,
// cancelling and the webhook secret are rarer. Each key is limited by its own rate limit (the
// "caller" limit, in the function); the gateway's route throttling only keeps floods from the
// functions, set where their reserved instances stop keeping up (a poll answers in ~10 ms): a
// route-wide 10/s was met by 20 anonymous requests a second and answered 429 to every customer.
const JOBS_CAP: Cap = { concurrency: 2, rate: 100, burst: 200 };
const JOBS_POLL_CAP: Cap = { concurrency: 1, rate: 100, burst: 200 };
const JOBS_MINOR_CAP: Cap = { concurrency: 1, rate: 50, burst: 100 };
const METADATA_CAP: Cap = { concurrency: 10, rate: 10, burst: 20 };
const SIGNUP_CAP: Cap = { concurrency: 2, rate: 2, burst: 5 };
// MCP renders in its own function: its tools' calls are charged as their routes', and it keeps a
// reserved pool of its own (which also bounds it: past 20 at once, agents use the REST routes).
const MCP_CAP: Cap = { concurrency: 20, rate: 20, burst: 40 };

const RENDER_PRICE: PriceRule = { standard: PRICES.screenshot, mockup: PRICES.mockup };

// API Gateway HTTP APIs cut every integration at 30 s, so render functions get 30 s of Lambda time
// and the pipeline's deadline keeps them below it (lib/deadline.ts), so that the client always
// gets our JSON error.
const RENDER = { memoryMB: 2048, timeoutSeconds: 30, browser: true, noStore: false, timeoutCode: "RENDER_TIMEOUT" } as const;
const LIGHT = { memoryMB: 256, timeoutSeconds: 10, browser: false, noStore: false, timeoutCode: "TIMEOUT" } as const;
const PRICED = { access: "priced", price: RENDER_PRICE, limits: ["caller"], cap: null, holds: "render" } as const;
const FREE = { price: null, limits: ["caller"], cap: LIGHT_CAP } as const;
const OPEN = { access: "open", price: null, limits: [], cap: LIGHT_CAP } as const;
/** An account's settings route: a key's, never cached, under MANAGE_CAP. */
const MANAGE = { ...LIGHT, ...FREE, access: "key", noStore: true, cap: MANAGE_CAP } as const;

const ROWS = [
  { id: "screenshot", method: "POST", path: "/api/v1/screenshot", ...RENDER, ...PRICED, uses: ["table", "bucket", "x402", "auto-topup-launch"] },
  {
    id: "html-to-screenshot",
    method: "POST",
    path: "/api/v1/html-to-screenshot",
    ...RENDER,
    ...PRICED,
    uses: ["table", "bucket", "x402", "auto-topup-launch"],
  },
  // A page as content (docs/api.md, "Content"): static when its HTML proves what a person sees, a
  // browser for pages with scripts, page controls and snapshots.
  {
    id: "content",
    method: "POST",
    path: "/api/v1/content",
    ...RENDER,
    access: "priced",
    // With a screenshot, the screenshot's price: the content comes with it.
    price: { standard: PRICES.content, mockup: PRICES.content, withScreenshot: RENDER_PRICE },
    limits: ["caller"],
    cap: null,
    holds: "render",
    uses: ["table", "bucket", "x402", "auto-topup-launch"],
  },
  // A page as a moving picture (docs/api.md, "Animate"): encoded in the function's own browsers.
  {
    id: "animate",
    method: "POST",
    path: "/api/v1/animate",
    ...RENDER,
    ...PRICED,
    price: { standard: PRICES.animate, mockup: PRICES.animate },
    uses: ["table", "bucket", "x402", "auto-topup-launch"],
  },
  // A site's URLs from its sitemaps and first pages (docs/crawl.md, "Map"): no browser, a crawler's
  // requests; it holds one of the caller's slots in flight while it waits on the site.
  {
    id: "map",
    method: "POST",
    path: "/api/v1/map",
    ...LIGHT,
    memoryMB: 512,
    timeoutSeconds: 30,
    access: "priced",
    price: { standard: PRICES.map, mockup: PRICES.map },
    limits: ["caller"],
    cap: null,
    holds: "render",
    // The bucket: an answer kept for an Idempotency-Key's retry.
    uses: ["table", "bucket", "x402", "auto-topup-launch"],
  },
  // Metadata may fall back to the browser for script-rendered pages, so it gets the layer too.
  {
    id: "metadata",
    method: "POST",
    path: "/api/v1/metadata",
    ...RENDER,
    memoryMB: 1536,
    ...FREE,
    cap: METADATA_CAP,
    access: "public",
    countsWhileWorking: true,
    uses: ["table"],
  },
  { id: "usage", method: "GET", path: "/api/v1/usage", ...LIGHT, ...FREE, access: "key", noStore: true, uses: ["table"] },
  { id: "health", method: "GET", path: "/api/v1/health", ...LIGHT, ...OPEN, uses: [] },
  {
    id: "signup",
    method: "POST",
    path: "/api/v1/signup",
    ...LIGHT,
    access: "public",
    price: null,
    limits: ["signup-ip", "caller"],
    cap: SIGNUP_CAP,
    noStore: true,
    uses: ["table", "mail"],
  },
  // The link a signup's verification mail carries (SIGNUP_VERIFICATION): a page for a person.
  // Capped as signups are: no more links can be followed than signups mailed.
  { id: "verify-email", method: "GET", path: "/api/v1/verify-email", ...LIGHT, ...OPEN, cap: SIGNUP_CAP, noStore: true, uses: ["table"] },
  { id: "account", method: "PATCH", path: "/api/v1/account", ...LIGHT, ...FREE, access: "key", noStore: true, uses: ["table"] },
  // Auto-topup (docs/api.md, "Auto-topup"): its configuration; setting it may submit a permit on chain.
  {
    id: "auto-topup-get",
    method: "GET",
    path: "/api/v1/auto-topup",
    ...MANAGE,
    uses: ["table", "x402", "auto-topup-offer"],
  },
  {
    id: "auto-topup-set",
    method: "PUT",
    path: "/api/v1/auto-topup",
    ...MANAGE,
    timeoutSeconds: 30,
    uses: ["table", "x402", "auto-topup-offer", "auto-topup-key", "auto-topup-launch"],
  },
  {
    id: "auto-topup-delete",
    method: "DELETE",
    path: "/api/v1/auto-topup",
    ...MANAGE,
    uses: ["table", "x402", "auto-topup-offer"],
  },
  // Top-up quotes its own amount (the body's), settled inside the request: more time than a light route.
  { id: "topup", method: "POST", path: "/api/v1/topup", ...LIGHT, timeoutSeconds: 30, ...FREE, access: "key", noStore: true, uses: ["table", "x402"] },
  { id: "dashboard", method: "GET", path: "/dashboard", ...LIGHT, ...OPEN, cap: DOCUMENT_CAP, uses: ["dashboard-files"] },
  // For agents (docs/agents.md): x402's discovery manifest and a plain-text guide.
  { id: "x402-manifest", method: "GET", path: "/.well-known/x402.json", ...LIGHT, ...OPEN, cap: DOCUMENT_CAP, uses: ["x402"] },
  { id: "llms-txt", method: "GET", path: "/llms.txt", ...LIGHT, ...OPEN, cap: DOCUMENT_CAP, uses: [] },
  // The OpenAPI document and its human reference page (docs/agents.md).
  { id: "openapi", method: "GET", path: "/openapi.json", ...LIGHT, ...OPEN, cap: DOCUMENT_CAP, uses: [] },
  { id: "docs", method: "GET", path: "/docs", ...LIGHT, ...OPEN, cap: DOCUMENT_CAP, uses: [] },
  // A render authorised by a signature in its query, for <img src> (docs/api.md, "Signed links").
  {
    id: "signed-screenshot",
    method: "GET",
    path: "/api/v1/screenshot",
    ...RENDER,
    access: "signed",
    price: RENDER_PRICE,
    limits: ["caller"],
    cap: null,
    holds: "render",
    // Its errors are never stored by a CDN; its renders say themselves how long they may be.
    noStore: true,
    uses: ["table", "bucket", "auto-topup-launch"],
  },
  // An account's signing keys for those links.
  {
    id: "signing-keys-create",
    method: "POST",
    path: "/api/v1/signing-keys",
    ...MANAGE,
    uses: ["table"],
  },
  { id: "signing-keys-list", method: "GET", path: "/api/v1/signing-keys", ...MANAGE, uses: ["table"] },
  {
    id: "signing-keys-revoke",
    method: "DELETE",
    path: "/api/v1/signing-keys/{keyId}",
    ...MANAGE,
    uses: ["table"],
  },
  // An account's API keys: make one (shown once), list them, revoke one (docs/api.md, "Keys and accounts").
  { id: "api-keys-create", method: "POST", path: "/api/v1/api-keys", ...MANAGE, uses: ["table"] },
  { id: "api-keys-list", method: "GET", path: "/api/v1/api-keys", ...MANAGE, uses: ["table"] },
  {
    id: "api-keys-revoke",
    method: "DELETE",
    path: "/api/v1/api-keys/{keyId}",
    ...MANAGE,
    uses: ["table"],
  },
  // Jobs (docs/api.md, "Jobs"): work that does not fit in one request, queued item by item; each
  // item is charged when it starts, by the worker (the `consumers` below).
  { id: "jobs-create", method: "POST", path: "/api/v1/jobs", ...MANAGE, timeoutSeconds: 30, cap: JOBS_CAP, uses: ["table", "bucket", "jobs-queue", "secrets"] },
  { id: "jobs-list", method: "GET", path: "/api/v1/jobs", ...MANAGE, cap: JOBS_MINOR_CAP, uses: ["table"] },
  { id: "jobs-get", method: "GET", path: "/api/v1/jobs/{jobId}", ...MANAGE, cap: JOBS_POLL_CAP, uses: ["table", "bucket"] },
  { id: "jobs-cancel", method: "DELETE", path: "/api/v1/jobs/{jobId}", ...MANAGE, cap: JOBS_MINOR_CAP, uses: ["table", "bucket", "webhooks-queue"] },
  // Crawls (docs/crawl.md, "Crawl"): a site read page by page by the jobs' workers, each page charged as it is delivered.
  { id: "crawl-create", method: "POST", path: "/api/v1/crawl", ...MANAGE, timeoutSeconds: 30, cap: JOBS_CAP, uses: ["table", "jobs-queue", "secrets"] },
  { id: "crawl-list", method: "GET", path: "/api/v1/crawl", ...MANAGE, cap: JOBS_MINOR_CAP, uses: ["table"] },
  { id: "crawl-get", method: "GET", path: "/api/v1/crawl/{crawlId}", ...MANAGE, cap: JOBS_POLL_CAP, uses: ["table", "bucket"] },
  { id: "crawl-cancel", method: "DELETE", path: "/api/v1/crawl/{crawlId}", ...MANAGE, cap: JOBS_MINOR_CAP, uses: ["table", "bucket", "jobs-queue"] },
  // Monitors (docs/api.md, "Monitors"): pages checked on a schedule; each check is charged when it
  // runs, by the jobs' worker (the `consumers` below), queued by the schedule (`schedules`).
  { id: "monitors-create", method: "POST", path: "/api/v1/monitors", ...MANAGE, cap: JOBS_MINOR_CAP, uses: ["table", "bucket", "jobs-queue", "secrets"] },
  { id: "monitors-list", method: "GET", path: "/api/v1/monitors", ...MANAGE, cap: JOBS_POLL_CAP, uses: ["table", "bucket"] },
  { id: "monitors-get", method: "GET", path: "/api/v1/monitors/{monitorId}", ...MANAGE, cap: JOBS_POLL_CAP, uses: ["table", "bucket"] },
  { id: "monitors-update", method: "PATCH", path: "/api/v1/monitors/{monitorId}", ...MANAGE, cap: JOBS_MINOR_CAP, uses: ["table", "bucket", "secrets"] },
  { id: "monitors-delete", method: "DELETE", path: "/api/v1/monitors/{monitorId}", ...MANAGE, cap: JOBS_MINOR_CAP, uses: ["table", "bucket"] },
  { id: "monitors-check", method: "POST", path: "/api/v1/monitors/{monitorId}/check", ...MANAGE, cap: JOBS_MINOR_CAP, uses: ["table", "jobs-queue"] },
  { id: "monitors-checks", method: "GET", path: "/api/v1/monitors/{monitorId}/checks", ...MANAGE, cap: JOBS_POLL_CAP, uses: ["table", "bucket"] },
  // The account's secret that signs its jobs' webhooks (shown once; a new one replaces it).
  { id: "webhook-secret", method: "POST", path: "/api/v1/webhook-secret", ...MANAGE, cap: JOBS_MINOR_CAP, uses: ["table"] },
  // The MCP server (docs/agents.md): open itself; each tool call applies its own route's access, limits and price.
  // A stored output by the name an MCP tool links to (lib/http/deliver.ts): a redirect to storage, so
  // that a client that sends its key with every request of its own still drops it on the way out.
  { id: "output", method: "GET", path: "/api/v1/outputs/{day}/{file}", ...LIGHT, ...OPEN, noStore: true, uses: ["bucket"] },
  {
    id: "mcp",
    method: "POST",
    path: "/mcp",
    ...RENDER,
    access: "open",
    price: null,
    limits: [],
    cap: MCP_CAP,
    uses: ["table", "bucket", "x402", "auto-topup-launch", "jobs-queue", "secrets"],
  },
  // API Gateway's $default route: answers 404 / 405 for anything the rows above do not route.
  { id: "fallback", method: null, path: null, ...LIGHT, ...OPEN, cap: FALLBACK_CAP, uses: [] },
] as const satisfies readonly Route[];

/** What a deployed function is, route or not: its handler file, size, time and what it uses. */
export type FunctionRow = Pick<Route, "id" | "memoryMB" | "timeoutSeconds" | "browser" | "uses">;

/** A scheduled function: not an HTTP route, but deployed and bundled the same way (functions/<id>.ts). */
export interface Schedule extends FunctionRow {
  /** An EventBridge schedule expression. */
  readonly schedule: `rate(${string})`;
}

/** Scheduled functions. The reconciler refunds charges whose request died before answering (docs/api.md, "Accounts and billing"); the monitors' schedule queues their checks. */
export const schedules: readonly Schedule[] = [
  {
    id: "reconcile",
    schedule: "rate(1 minute)",
    memoryMB: 256,
    timeoutSeconds: 50,
    browser: false,
    // The webhooks queue: the events of the job items it sweeps (lib/jobs/sweep.ts).
    uses: ["table", "x402", "auto-topup-offer", "auto-topup-key", "jobs-queue", "webhooks-queue"],
  },
  // The monitors' schedule (lib/monitors/schedule.ts): queues the checks due, each once, and sweeps the dead ones (their events: the webhooks queue).
  {
    id: "monitors-schedule",
    schedule: "rate(1 minute)",
    memoryMB: 256,
    timeoutSeconds: 50,
    browser: false,
    uses: ["table", "jobs-queue", "webhooks-queue"],
  },
];

/** A function other functions invoke asynchronously: an auto-topup pull, launched by a charge (lib/payments/auto-topup-launch.ts). */
export const workers: readonly FunctionRow[] = [
  // A pull waits up to a minute for its receipt, then leaves it to the reconciler.
  { id: "auto-topup", memoryMB: 256, timeoutSeconds: 90, browser: false, uses: ["table", "x402", "auto-topup-offer", "auto-topup-key"] },
];

/**
 * A function fed by a queue of its own (Lambda's SQS event source), at most `concurrency` at once
 * (reserved): the jobs worker runs one item a message (lib/jobs/run.ts), longer than a request may
 * last (an item's page-load limit is up to 90 s), so that jobs cannot take the capacity of
 * synchronous requests; the webhook sender makes one delivery attempt a message
 * (lib/jobs/webhooks.ts), without a browser, so that events and their retries never wait behind
 * the items of every job queued before them.
 */
export interface Consumer extends FunctionRow {
  readonly queue: "jobs" | "webhooks";
  readonly concurrency: number;
}

export const consumers: readonly Consumer[] = [
  {
    id: "job-worker",
    queue: "jobs",
    memoryMB: 2048,
    timeoutSeconds: 150,
    browser: true,
    concurrency: 20,
    uses: ["table", "bucket", "jobs-queue", "webhooks-queue", "secrets"],
  },
  // An attempt waits 10 s at most for its receiver.
  { id: "webhook-sender", queue: "webhooks", memoryMB: 256, timeoutSeconds: 30, browser: false, concurrency: 5, uses: ["table", "webhooks-queue"] },
];

/** Every endpoint, once. */
export const routes: readonly Route[] = ROWS;

/** The id of a row: a handler naming a route that is not in the table does not compile. */
export type RouteId = (typeof ROWS)[number]["id"];

/** The row with this id, by its own type (so `access` and `price` are known precisely). */
export type RouteOf<Id extends RouteId> = Extract<(typeof ROWS)[number], { id: Id }>;

/** A row that API Gateway routes by method and path. */
export type HttpRoute = Route & { readonly method: HttpMethod; readonly path: string };

/** The rows API Gateway routes by method and path (all but the $default catch-all). */
export const httpRoutes: readonly HttpRoute[] = routes.filter((r): r is HttpRoute => r.method !== null && r.path !== null);

/** The catch-all row (API Gateway's $default). */
export const fallbackRoute = routeById("fallback");

/** The row with `id`; throws when there is none (a handler module with a wrong id fails as it loads). */
export function routeById<Id extends RouteId>(id: Id): RouteOf<Id> {
  const route = routes.find((r) => r.id === id);
  if (!route) throw new Error(`lib/routes.ts has no route "${String(id)}"`);
  return route as unknown as RouteOf<Id>;
}

/** The path parameters of `path` if it matches the route path `template` (`{name}` is one segment), else null. */
export function pathParams(template: string, path: string): Record<string, string> | null {
  const names: string[] = [];
  const pattern = template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{(\w+)\}/g, (_, name: string) => {
    names.push(name);
    return "([^/]+)";
  });
  const match = new RegExp(`^${pattern}$`).exec(path);
  if (!match) return null;
  try {
    return Object.fromEntries(names.map((name, i) => [name, decodeURIComponent(match[i + 1]!)]));
  } catch {
    return null; // a malformed escape: no route
  }
}

/** Finds the route for a method and path; `allowed` lists the path's methods when only the method is wrong. */
export function matchRoute(method: string, path: string): { route?: HttpRoute; allowed: HttpMethod[] } {
  const samePath = httpRoutes.filter((r) => pathParams(r.path, path) !== null);
  const route = samePath.find((r) => r.method === method.toUpperCase());
  return { route, allowed: samePath.map((r) => r.method) };
}
