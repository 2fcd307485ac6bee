import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from "aws-lambda";
import { z } from "zod";
import {
  animateRequest,
  animationOf,
  contentToolRequest,
  crawlRequest,
  htmlScreenshotRequest,
  mapRequest,
  metadataRequest,
  screenshotRequest,
  sourceOf,
} from "../api/schemas.js";
import { inSlot } from "../billing/slots.js";
import { usageReport } from "../billing/usage.js";
import { mapSite } from "../crawl/map.js";
import { getCrawl } from "../crawl/store.js";
import { AppError } from "../errors.js";
import { callerOf } from "../http/access.js";
import { contentAnswer } from "../http/content.js";
import { crawlSummary, startCrawl } from "../http/crawl-start.js";
import { crawlAnswer, ownCrawl, PAGES_LISTED } from "../http/crawls.js";
import { captureOptionsOf, deliverAnimationForTool, deliverForTool } from "../http/deliver.js";
import { toolDiscoveryOf } from "../http/discovery.js";
import { keyAccess } from "../http/key-access.js";
import { monitorRequest } from "../http/monitor-schemas.js";
import { checkAnswer, createMonitorAnswer, monitorsAnswer } from "../http/monitors.js";
import { paidAccess } from "../http/paid-access.js";
import { renderThrough } from "../http/render-cache.js";
import { json } from "../http/responses.js";
import { withHttp } from "../http/with-http.js";
import { extractMetadata } from "../metadata/extract.js";
import { checkNow, getCheck, ownMonitor } from "../monitors/store.js";
import { animate } from "../render/animate/animate.js";
import { capture } from "../render/capture.js";
import { PREVIEW_MAX_HEIGHT, PREVIEW_MAX_WIDTH } from "../render/encode.js";
import { routeById } from "../routes.js";

// The MCP server's tools (docs/agents.md, "MCP"). Each runs through its REST route's own pipeline
// (lib/http/with-http.ts), in process: the same validation, access, rate limits, price, charge or
// x402 verification before the work and settlement after it, the same errors. Only the answer
// differs: a link to the full output and a preview sized for a model, instead of the bytes.

/** A tool's pipeline: an API Gateway handler for its route. */
type Pipeline = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

export interface Tool {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  /** What the tool takes, as JSON Schema (from the route's zod schema; made when first listed). */
  readonly inputSchema: () => Record<string, unknown>;
  /** The HTTP method of its route, as the pipeline sees it. */
  readonly method: "GET" | "POST";
  readonly pipeline: Pipeline;
  /** Renders: its answer carries an image or a link. */
  readonly renders: boolean;
  /** Costs money per call (a second call is charged again: not idempotent). */
  readonly charges: boolean;
  /** Changes the account's state (makes a monitor, queues a check): not read-only. */
  readonly changes?: boolean;
  /** The text a model reads of a successful answer (the JSON itself when absent); the answer stays structured content. */
  readonly asText?: (answer: Record<string, unknown>) => string;
}

/** The JSON Schema of a request body as a model sends it, without the fields a tool does not take. */
function argumentsSchema(schema: z.ZodType, without: readonly string[] = []): Record<string, unknown> {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Record<string, unknown> & {
    properties?: Record<string, unknown>;
  };
  if (rest.properties) rest.properties = Object.fromEntries(Object.entries(rest.properties).filter(([name]) => !without.includes(name)));
  return rest;
}

const PREVIEW = `The result shows a JPEG preview at most ${PREVIEW_MAX_WIDTH} px wide (the top ${PREVIEW_MAX_HEIGHT} px of a longer page) and links to the full-resolution output for an hour; a PDF is returned as a link only.`;
const PRICES =
  'Costs $0.005 ($0.01 with style: "mockup"), charged only when the render succeeds: to the API key sent as Authorization: Bearer, or paid per call with x402 (the first call answers the payment requirements; retry with the payment in _meta["x402/payment"]).';

const screenshot: Tool = {
  name: "screenshot",
  title: "Screenshot a web page",
  description: `Loads a public web page in Chromium and captures it as PNG, JPEG, WebP, AVIF or PDF. Set url; optionally width/height (viewport, default 1280x800), fullPage: true for the whole page, selector for one element, format, deviceScaleFactor (default 2), darkMode, delay or waitForSelector for pages that load late, blockAds and blockCookieBanners, or style: "mockup" with frame (browser, laptop, tablet, phone) to frame it on a background. To see why a page looks wrong, capture: {console: true, network: true} (or har: true) links its console messages, failed requests or a HAR; proxy ("http://user:pass@host:port", https or socks5) loads it through your own proxy. ${PREVIEW} ${PRICES}`,
  inputSchema: () => argumentsSchema(screenshotRequest, ["responseFormat"]),
  method: "POST",
  renders: true,
  charges: true,
  pipeline: withHttp(
    { route: "screenshot", schema: screenshotRequest, access: paidAccess, discovery: () => toolDiscoveryOf("screenshot", routeById("screenshot")) },
    async ({ body, deadline, cache, resource }) => {
      const { url, ...rest } = body;
      const shot = await renderThrough(cache, () => capture({ kind: "url", url }, captureOptionsOf(rest), deadline));
      return deliverForTool(shot.capture, new URL(resource.url).origin, shot.headers);
    },
  ),
};

const htmlToScreenshot: Tool = {
  name: "html_to_screenshot",
  title: "Render HTML to an image",
  description: `Renders an HTML document you write (html, up to 500 KB; inline CSS, images as data: URLs or public URLs) in Chromium and captures it: for social cards, charts, invoices, receipts. Set width and height to the size you want (default 1280x800); every option of the screenshot tool applies. ${PREVIEW} ${PRICES}`,
  inputSchema: () => argumentsSchema(htmlScreenshotRequest, ["responseFormat"]),
  method: "POST",
  renders: true,
  charges: true,
  pipeline: withHttp(
    {
      route: "html-to-screenshot",
      schema: htmlScreenshotRequest,
      access: paidAccess,
      discovery: () => toolDiscoveryOf("html_to_screenshot", routeById("html-to-screenshot")),
    },
    async ({ body, deadline, cache, resource }) => {
      const { html, ...rest } = body;
      const shot = await renderThrough(cache, () => capture({ kind: "html", html }, captureOptionsOf(rest), deadline));
      return deliverForTool(shot.capture, new URL(resource.url).origin, shot.headers);
    },
  ),
};

/**
 * The MCP function's instances free tool calls may hold at once (lib/billing/slots.ts), a quarter of
 * its reserved concurrency: a flood of free metadata calls cannot take the places its paid renders
 * need. Past it, 429 (the REST route, with a pool of its own, still answers).
 */
export const FREE_CALLS = { pool: "mcp-free", size: Math.floor(routeById("mcp").cap.concurrency / 4), perCaller: 2 } as const;

const metadata: Tool = {
  name: "metadata",
  title: "Read a page's metadata",
  description:
    "Reads a web page's title, description, Open Graph and Twitter card tags, image (with its size and alt text), favicon, logo, theme colour, language, canonical URL, site name, author, publication dates and feeds, as a link preview shows them. Free; no key needed (rate-limited per caller).",
  inputSchema: () => argumentsSchema(metadataRequest),
  method: "POST",
  renders: false,
  charges: false,
  // In one of the MCP function's few places for free calls: its instances are there for paid renders.
  // And one caller (a key's account, or a client address) holds at most two of those places.
  pipeline: withHttp({ route: "metadata", schema: metadataRequest, access: keyAccess }, async ({ account, sourceIp, body, deadline, requestId }) => {
    const caller = callerOf({ account, ip: sourceIp });
    const work = () => inSlot(FREE_CALLS.pool, FREE_CALLS.size, requestId, deadline.at, () => extractMetadata(body.url, deadline));
    return json(await inSlot(`${FREE_CALLS.pool}:${caller}`, FREE_CALLS.perCaller, requestId, deadline.at, work));
  }),
};

const usage: Tool = {
  name: "usage",
  title: "Balance and recent usage",
  description:
    "The calling API key's balance (micro-USD: 1,000,000 = $1), total spent and recent charges and refunds. Needs Authorization: Bearer <key>; free.",
  inputSchema: () => ({ type: "object", properties: {}, additionalProperties: false }),
  method: "GET",
  renders: false,
  charges: false,
  pipeline: withHttp({ route: "usage", access: keyAccess }, async ({ account, deadline }) => json(await usageReport(account.accountId, deadline.signal))),
};

const CONTENT_PRICE = `Costs $0.002, charged only when it succeeds: to the API key sent as Authorization: Bearer, or paid per call with x402 (the first call answers the payment requirements; retry with the payment in _meta["x402/payment"]).`;

/** The content answer as a model reads it: the title and address, then the content itself (not JSON-escaped). */
const contentText = (answer: Record<string, unknown>) => {
  const content = (answer.markdown ?? answer.text ?? answer.html ?? "") as string;
  const data = answer.data ? `\n\nFields: ${JSON.stringify(answer.data)}` : "";
  return `${answer.title ? `${answer.title}\n` : ""}${answer.url ?? ""}\n\n${content}${data}`;
};

/** A tool answering with the content route (lib/http/content.ts) under `name`, taking `schema`. */
const contentTool = (
  name: string,
  title: string,
  description: string,
  schema: typeof contentToolRequest,
  inputSchema: () => Record<string, unknown>,
): Tool => ({
  name,
  title,
  description: `${description} ${CONTENT_PRICE}`,
  inputSchema,
  method: "POST",
  renders: false,
  charges: true,
  asText: contentText,
  pipeline: withHttp(
    { route: "content", schema, access: paidAccess, discovery: () => toolDiscoveryOf(name, routeById("content")) },
    async ({ body, deadline }) => contentAnswer(body, deadline),
  ),
});

const readPage = contentTool(
  "read_page",
  "Read a web page",
  'Reads a web page (url) or an HTML document (html) as a reader would: its main content without navigation, footers, cookie banners, ads or share bars (scope: "page" for everything), as Markdown by default (format: "text" or "html"), with its metadata; links: true adds its links. Text hidden from readers (a known trick to smuggle instructions to agents) is left out. A browser runs for pages with scripts or styles the static HTML cannot prove (render: "always" to force it, "never" to read the static HTML only).',
  contentToolRequest,
  () => argumentsSchema(contentToolRequest),
);

/** The content request with `extract` required: what scrape takes. */
const scrapeRequest = contentToolRequest.refine((body) => body.extract !== undefined, { path: ["extract"], error: "is required: name the fields to scrape" });

const scrape = contentTool(
  "scrape",
  "Scrape fields from a web page",
  'Reads named fields from a web page (url) or HTML document (html) by CSS selector: extract: { "name": "selector" } for the first match\'s text, or { "name": { "selector", "attribute", "all": true } } for an attribute or every match. Answers data with each field (null when nothing matched), with the page\'s text and metadata. Hidden elements are not scraped.',
  scrapeRequest,
  () => {
    const schema = argumentsSchema(scrapeRequest) as { required?: string[] };
    return { ...schema, required: [...(schema.required ?? []), "extract"] };
  },
);

const mapSiteTool: Tool = {
  name: "map_site",
  title: "List a site's URLs",
  description:
    'Lists the URLs of a web site (url: its start page) in seconds, without reading their content: from its sitemaps (those robots.txt names and /sitemap.xml, indexes and .xml.gz followed) and the links of its start page and a few pages it links to, each with where it was found (start, sitemap, link). URLs are normalised (no fragment, tracking or session parameters), kept to the start\'s host (subdomains: true for the hosts under it), to include globs and away from exclude globs (* within a path segment, ** across, on the whole URL), and to what robots.txt allows the crawler (product token Shotline). limit: 1 to 5,000 (default 1,000). Costs $0.001, charged only when it succeeds: to the API key sent as Authorization: Bearer, or paid per call with x402 (the first call answers the payment requirements; retry with the payment in _meta["x402/payment"]).',
  inputSchema: () => argumentsSchema(mapRequest),
  method: "POST",
  renders: false,
  charges: true,
  // The URLs one a line, for the model; the whole answer structured.
  asText: (answer) => (answer.urls as { url: string }[]).map((u) => u.url).join("\n"),
  pipeline: withHttp(
    { route: "map", schema: mapRequest, access: paidAccess, discovery: () => toolDiscoveryOf("map_site", routeById("map")) },
    async ({ body, deadline }) => json(await mapSite(body, deadline)),
  ),
};

const animateTool: Tool = {
  name: "animate",
  title: "Record a web page scrolling",
  description: `Loads a web page (url) or an HTML document (html) in Chromium and records it scrolling from the top to the bottom (scroll.to: a CSS selector or a length in px to stop elsewhere; easing, holdStart, holdEnd, back) as an MP4 video (format: "webm", "gif" or "webp" animated images), duration seconds (default 5) at fps; width and height as for the screenshot tool (deviceScaleFactor 1 by default). For a landing page's preview, a product tour, a social post. The result links to the file for an hour (no preview: a model cannot watch it). Costs $0.02, charged only when it succeeds: to the API key sent as Authorization: Bearer, or paid per call with x402 (the first call answers the payment requirements; retry with the payment in _meta["x402/payment"]).`,
  inputSchema: () => argumentsSchema(animateRequest, ["responseFormat"]),
  method: "POST",
  renders: true,
  charges: true,
  pipeline: withHttp(
    { route: "animate", schema: animateRequest, access: paidAccess, discovery: () => toolDiscoveryOf("animate", routeById("animate")) },
    async ({ body, deadline, resource }) => {
      const { responseFormat: _, ...request } = body;
      const { options, animation } = animationOf(request);
      return deliverAnimationForTool(await animate(sourceOf(request), options, animation, deadline), new URL(resource.url).origin);
    },
  ),
};

const crawlSiteTool: Tool = {
  name: "crawl_site",
  title: "Crawl a web site",
  description: `Starts reading a web site (url: its start page) page by page, and answers at once with the crawl's id: its sitemaps and its pages' links, breadth first, depth hops at most (default 5), until limit pages (1 to 10,000, default 100) are delivered, each as Markdown by default (formats: markdown, text, html, links, metadata). URLs are normalised, kept to the start's host (subdomains: true for the hosts under it), to include globs and away from exclude globs (* within a path segment, ** across), and to what robots.txt allows the crawler (product token Shotline); it waits Crawl-delay and Retry-After and keeps two requests in flight per host. A browser reads only pages whose static HTML cannot prove what a person sees (render: "always" or "never" to choose). maxAge (seconds) delivers a page this account's crawls delivered within that time from its copy, without asking the site ($0.001); webhookUrl gets a signed crawl.completed when it ends (the account needs a webhook secret). Read its progress and pages with get_crawl. Each page delivered costs $0.001 ($0.002 when a browser read it), charged to the API key sent as Authorization: Bearer (no x402: a crawl runs long after the call); limit pages at $0.002 are held until it ends; skipped, duplicate and failed pages are free.`,
  inputSchema: () => argumentsSchema(crawlRequest),
  method: "POST",
  renders: false,
  charges: true,
  changes: true,
  pipeline: withHttp({ route: "crawl-create", schema: crawlRequest, access: keyAccess }, async ({ account, body }) =>
    json(crawlSummary(await startCrawl(account.accountId, body))),
  ),
};

const getCrawlRequest = z.strictObject({
  crawlId: z.string({ error: "must be a crawl id (crl_...), from crawl_site" }).max(64),
  cursor: z.string({ error: "must be the next_cursor of the last answer" }).max(64).optional(),
});

const getCrawlTool: Tool = {
  name: "get_crawl",
  title: "Read a crawl",
  description:
    "A crawl of the account's (crawlId, from crawl_site): its status (running, completed, cancelled), counts (discovered, delivered, failed, skipped by reason), what it cost, and up to 100 of its pages, each with its status, why it was skipped, its title and a link (an hour) to its content in the formats asked; next_cursor, given as cursor, reads the next 100. Answers at once; call it again while the status is running. Free; needs Authorization: Bearer <key>.",
  inputSchema: () => argumentsSchema(getCrawlRequest),
  method: "POST",
  renders: false,
  charges: false,
  pipeline: withHttp({ route: "crawl-get", schema: getCrawlRequest, access: keyAccess }, async ({ account, body }) =>
    json(await crawlAnswer(ownCrawl(account.accountId, await getCrawl(body.crawlId)), PAGES_LISTED.default, body.cursor)),
  ),
};

const MONITOR_PRICE =
  'Each check is charged when it runs to the API key sent as Authorization: Bearer (no x402: a monitor runs long after the call): $0.005, or $0.002 with mode: "text"; a failed check is free.';

const createMonitorTool: Tool = {
  name: "create_monitor",
  title: "Watch a web page for changes",
  description: `Checks a web page (url) every \`every\` ("5m" to "1d", default "1h") and compares each check with the last change: visually (rows aligned first, so an inserted block is reported as that block) and by its text lines (mode: "visual", "text" or "both", the default). ignoreSelectors hides clocks, ads and carousels in place; ignoreText takes RE2 patterns out of the text; threshold.percent is the changed share that counts as a visual change (default 0.1). With webhookUrl, a signed monitor.changed event is POSTed when it changes (the account needs a webhook secret). The first check, the baseline, runs at once. ${MONITOR_PRICE}`,
  inputSchema: () => argumentsSchema(monitorRequest),
  method: "POST",
  renders: false,
  charges: false,
  changes: true,
  pipeline: withHttp({ route: "monitors-create", schema: monitorRequest, access: keyAccess }, async ({ account, body }) =>
    createMonitorAnswer(account.accountId, body),
  ),
};

const listMonitorsTool: Tool = {
  name: "list_monitors",
  title: "List watched pages",
  description:
    "The account's monitors: what each watches, its status (active, failing, paused), next check, last check and last change (with a thumbnail link). Free; needs Authorization: Bearer <key>.",
  inputSchema: () => ({ type: "object", properties: {}, additionalProperties: false }),
  method: "GET",
  renders: false,
  charges: false,
  pipeline: withHttp({ route: "monitors-list", access: keyAccess }, async ({ account }) => monitorsAnswer(account.accountId)),
};

const checkMonitorRequest = z.strictObject({ monitorId: z.string({ error: "must be a monitor id (mon_...)" }).max(64) });

// check_monitor answers at once: a tool call that waited for its check would hold one of the MCP
// function's instances, which every agent shares, for the check's whole time (docs/agents.md, "Capacity").
const checkMonitorTool: Tool = {
  name: "check_monitor",
  title: "Check a watched page now",
  description: `Queues a check of a monitor (monitorId, from create_monitor or list_monitors) now and answers at once with its id and status (queued). A check takes a few seconds to a minute: read its outcome with get_check (monitorId, checkId) until its status is done: baseline, unchanged, changed (with changedPercent, the changed regions, the text lines added and removed, and links to the before, after and diff images) or failed (with why). ${MONITOR_PRICE}`,
  inputSchema: () => argumentsSchema(checkMonitorRequest),
  method: "POST",
  renders: false,
  charges: true,
  changes: true,
  pipeline: withHttp({ route: "monitors-check", schema: checkMonitorRequest, access: keyAccess }, async ({ account, body }) => {
    const { monitor, checkId } = await checkNow(account.accountId, body.monitorId);
    const check = await getCheck(monitor.id, checkId);
    return json({ monitor_id: monitor.id, ...(check ? await checkAnswer(check) : { id: checkId, status: "queued" }) });
  }),
};

const getCheckRequest = z.strictObject({
  monitorId: z.string({ error: "must be a monitor id (mon_...)" }).max(64),
  checkId: z.string({ error: "must be a check id (chk_...), from check_monitor or list_monitors" }).max(64),
});

const getCheckTool: Tool = {
  name: "get_check",
  title: "Read a monitor's check",
  description:
    "A check of one of the account's monitors (monitorId, and checkId from check_monitor or list_monitors): its status (queued, running, done) and, once done, its outcome: baseline, unchanged, changed (with changedPercent, the changed regions, the text lines added and removed, and links to the before, after and diff images) or failed (with why). Answers at once; call it again while the status is not done. Free; needs Authorization: Bearer <key>.",
  inputSchema: () => argumentsSchema(getCheckRequest),
  // Its arguments travel as a JSON body (the tool's event is a POST); the route is the checks' own.
  method: "POST",
  renders: false,
  charges: false,
  pipeline: withHttp({ route: "monitors-checks", schema: getCheckRequest, access: keyAccess }, async ({ account, body }) => {
    const monitor = await ownMonitor(account.accountId, body.monitorId);
    const check = await getCheck(monitor.id, body.checkId);
    if (!check) throw new AppError("NOT_FOUND", `The monitor has no check ${JSON.stringify(body.checkId)}.`);
    return json({ monitor_id: monitor.id, ...(await checkAnswer(check)) });
  }),
};

/** Every tool, in the order tools/list gives them. */
export const tools: readonly Tool[] = [
  screenshot,
  htmlToScreenshot,
  animateTool,
  readPage,
  scrape,
  mapSiteTool,
  crawlSiteTool,
  getCrawlTool,
  metadata,
  createMonitorTool,
  listMonitorsTool,
  checkMonitorTool,
  getCheckTool,
  usage,
];
