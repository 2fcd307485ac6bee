import { z } from "zod";
import { animateRequest, contentRequest, htmlScreenshotRequest, mapRequest, screenshotRequest } from "../api/schemas.js";
import type { Route } from "../routes.js";
import { ANIMATION_EXAMPLE, RENDER_EXAMPLE } from "./response-schemas.js";

// How agents find and understand the paid routes (docs/agents.md): x402's `bazaar` discovery
// extension in every 402 (v2, in the PAYMENT-REQUIRED header: kept compact), `outputSchema` with
// every field in v1 bodies, and the well-known manifest. Everything comes from the request schemas
// (lib/api/schemas.ts), so it cannot drift from what the routes accept.

/** Who we are, as x402 resources name a service (printable ASCII, at most 32 characters; at most 5 tags). */
export const SERVICE = { serviceName: "Shotline", tags: ["screenshot", "pdf", "html-to-image", "mockup", "web-capture"] } as const;

/** The fields of a render a header's compact schema lists (every field is in the v1 body and the well-known manifest). */
const HEADLINE_FIELDS = [
  "url",
  "html",
  "format",
  "fullPage",
  "width",
  "height",
  "deviceScaleFactor",
  "quality",
  "imageWidth",
  "imageHeight",
  "style",
  "frame",
  "selector",
  "blockAds",
  "blockCookieBanners",
  "duration",
  "fps",
  "scroll",
  "responseFormat",
];

/** What a discoverable route says about itself. */
interface Discoverable {
  readonly description: string;
  readonly schema: z.ZodType;
  readonly example: Record<string, unknown>;
  /** An answer's example (a render's, unless said). */
  readonly output?: Record<string, unknown>;
  /** What it answers by default (an image for a render, JSON when `output` is given, unless said). */
  readonly mimeType?: string;
}

/** What POST /api/v1/content answers, for discovery. */
const CONTENT_EXAMPLE = {
  url: "https://example.com/",
  title: "Example Domain",
  markdown: "# Example Domain\n\nThis domain is for use in illustrative examples in documents.\n",
  metadata: { title: "Example Domain", description: "", ogImage: null },
  rendered: false,
  tokens: 21,
};

const FORMS = "PNG, JPEG, WebP, AVIF or PDF, optionally framed as a mockup (browser, laptop, tablet or phone on a background)";
const PRICES = "$0.005 a capture, $0.01 a mockup";

const DISCOVERABLE: Readonly<Record<string, Discoverable>> = {
  screenshot: {
    description: `Screenshot of a web page as ${FORMS}. ${PRICES}. Every field: /.well-known/x402.json.`,
    schema: screenshotRequest,
    example: { url: "https://example.com", fullPage: true, format: "png", responseFormat: "json" },
  },
  "html-to-screenshot": {
    description: `Raw HTML rendered as ${FORMS}. ${PRICES}. Every field: /.well-known/x402.json.`,
    schema: htmlScreenshotRequest,
    example: { html: "<h1>Hello</h1>", width: 800, height: 400, format: "png", responseFormat: "json" },
  },
  content: {
    description:
      "A web page as content for agents: its main content (or whole body) as Markdown, text or cleaned HTML, with its metadata and links; text a person could not see left out; a browser for pages with scripts or styles the static reader cannot prove, or page controls. $0.002; with screenshot (content and image of one page load) the screenshot's price.",
    schema: contentRequest,
    example: { url: "https://example.com", format: "markdown", links: true },
    output: CONTENT_EXAMPLE,
    mimeType: "application/json",
  },
  map: {
    description:
      "A site's URLs in seconds: its sitemaps (robots.txt's, /sitemap.xml, indexes, .xml.gz) and its first pages' links, normalised, in scope (include/exclude globs, subdomains), allowed by robots.txt. $0.001.",
    schema: mapRequest,
    example: { url: "https://example.com", limit: 100 },
    output: {
      url: "https://example.com/",
      urls: [{ url: "https://example.com/", source: "start" }],
      skipped: { robots: 0, scope: 0, trap: 0 },
      sitemaps: [],
      robots: { found: false, crawlDelay: 0 },
    },
    mimeType: "application/json",
  },
  animate: {
    description:
      "A web page or raw HTML recorded scrolling, top to bottom (or to an element or a length), as MP4 (H.264), WebM (VP9), GIF or animated WebP: duration, fps, easing, holds, and back to the top. $0.02. Every field: /.well-known/x402.json.",
    schema: animateRequest,
    example: { url: "https://example.com", format: "mp4", duration: 5, responseFormat: "json" },
    output: ANIMATION_EXAMPLE,
    mimeType: "video/mp4",
  },
};

type JsonSchema = { properties?: Record<string, unknown>; required?: string[] } & Record<string, unknown>;

/** The JSON Schema of a request body as a client sends it (defaults optional). */
const bodySchema = (schema: z.ZodType): JsonSchema => {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as JsonSchema;
  return rest;
};

/** The compact schema of the 402 header: the headline fields and the rules across fields, others allowed. */
const headlineSchema = (schema: z.ZodType): JsonSchema => {
  const full = bodySchema(schema);
  const properties = Object.fromEntries(Object.entries(full.properties ?? {}).filter(([name]) => HEADLINE_FIELDS.includes(name)));
  // The rules across fields too: a client writing from the compact schema still writes valid bodies.
  return {
    type: "object",
    properties,
    ...(full.required ? { required: full.required } : {}),
    ...(full.allOf ? { allOf: full.allOf } : {}),
    additionalProperties: true,
  };
};

/** What a route's x402 resource says it is. */
export const describe = (route: Pick<Route, "id" | "method" | "path">): string =>
  DISCOVERABLE[route.id]?.description ?? `Shotline ${route.id}${route.method ? ` (${route.method} ${route.path})` : ""}`;

/** What a route answers: an image for a render, JSON for the rest, unless it says (content, animate). */
export const mimeTypeOf = (route: Pick<Route, "id" | "browser">): string =>
  DISCOVERABLE[route.id]?.mimeType ?? (route.browser ? "image/png" : "application/json");

/** The discovery data of a route, or null when it is not a paid render. */
export interface Discovery {
  /** x402 v2 `extensions.bazaar` (compact). */
  readonly bazaar: Record<string, unknown>;
  /** x402 v1 `outputSchema`: every field. */
  readonly outputSchema: Record<string, unknown>;
  /** For the well-known manifest. */
  readonly input: Record<string, unknown>;
  readonly output: Record<string, unknown>;
}

/** The JSON Schema of a bazaar extension's `info` whose input has `properties` (as @x402/extensions declares them). */
const bazaarSchema = (properties: Record<string, unknown>, required: string[]) => ({
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  properties: {
    input: { type: "object", properties, required, additionalProperties: false },
    output: { type: "object", properties: { type: { type: "string" }, example: { type: "object" } }, required: ["type"] },
  },
  required: ["input"],
});

const cache = new Map<string, Discovery | null>();

/** `make()` under `key`, made once per process when first asked for (zod's JSON Schema costs ~35 ms cold). */
function once(key: string, make: () => Discovery | null): Discovery | null {
  if (!cache.has(key)) cache.set(key, make());
  return cache.get(key)!;
}

/** The discovery data of `route`, made once per process. */
export const discoveryOf = (route: Pick<Route, "id" | "method">): Discovery | null => once(route.id, () => routeDiscovery(route));

function routeDiscovery(route: Pick<Route, "id" | "method">): Discovery | null {
  const declared = DISCOVERABLE[route.id];
  if (!declared || !route.method) return null;
  const compact = headlineSchema(declared.schema);
  const full = bodySchema(declared.schema);
  const input = { type: "http", method: route.method, bodyType: "json", body: declared.example };
  const example = declared.output ?? RENDER_EXAMPLE;
  const output = { type: "json", example };
  return {
    bazaar: {
      info: { input, output },
      schema: bazaarSchema(
        {
          type: { type: "string", const: "http" },
          method: { type: "string", enum: ["POST", "PUT", "PATCH"] },
          bodyType: { type: "string", enum: ["json", "form-data", "text"] },
          body: compact,
        },
        ["type", "method", "bodyType", "body"],
      ),
    },
    outputSchema: {
      input: {
        type: "http",
        method: route.method,
        discoverable: true,
        bodyType: "json",
        bodyFields: full.properties,
        example: declared.example,
      },
      output: example,
    },
    input: { method: route.method, bodyType: "json", body: declared.example, inputSchema: full },
    output: { mimeType: mimeTypeOf({ id: route.id, browser: true }), example },
  };
}

/**
 * x402's well-known discovery manifest (`/.well-known/x402.json`, the draft in the x402 repository's
 * specs/extensions/well-known-discovery.md): every paid render at its standard price, for `origin`.
 * The live 402 stays authoritative (a mockup costs more).
 */
export function discoveryManifest(origin: string, routes: readonly Route[], requirements: (amount: number) => unknown, updatedAt: number) {
  const items = routes.flatMap((route) => {
    const discovery = route.price && route.path ? discoveryOf(route) : null;
    if (!discovery || !route.price || !route.path) return [];
    return [
      {
        resource: { url: `${origin}${route.path}`, description: describe(route), mimeType: mimeTypeOf(route), ...SERVICE },
        type: "http",
        accepts: [requirements(route.price.standard)],
        input: discovery.input,
        output: discovery.output,
      },
    ];
  });
  return { x402Version: 2, lastUpdated: updatedAt, items };
}

/**
 * The discovery data of the MCP tool `toolName`, which renders through `route`: x402's bazaar for an
 * MCP tool (input type "mcp", as @x402/extensions declares one) in its 402s; the rest as the route's.
 * Made once per process.
 */
export const toolDiscoveryOf = (toolName: string, route: Pick<Route, "id" | "method">): Discovery | null =>
  once(`mcp:${toolName}`, () => toolDiscovery(toolName, route));

function toolDiscovery(toolName: string, route: Pick<Route, "id" | "method">): Discovery | null {
  const http = discoveryOf(route);
  const declared = DISCOVERABLE[route.id];
  if (!http || !declared) return null;
  const { responseFormat: _, ...example } = declared.example;
  const input = { type: "mcp", toolName, transport: "streamable-http", inputSchema: headlineSchema(declared.schema), example };
  const schema = bazaarSchema(
    {
      type: { type: "string", const: "mcp" },
      toolName: { type: "string" },
      transport: { type: "string", enum: ["streamable-http"] },
      inputSchema: { type: "object" },
      example: { type: "object" },
    },
    ["type", "toolName", "inputSchema"],
  );
  return { ...http, bazaar: { info: { input, output: { type: "json", example: declared.output ?? RENDER_EXAMPLE } }, schema } };
}

/** /llms.txt: what an agent needs to use the service, in a page of Markdown (llmstxt.org's form). */
export const llmsTxt = (origin: string): string => `# Shotline

> Screenshots of web pages and raw HTML as PNG, JPEG, WebP, AVIF or PDF, optionally framed as a
> mockup; pages recorded scrolling as video, GIF or animated WebP; pages as content for agents; and
> page metadata; pages watched for change. Pay per call with an API key or with x402 (USDC, no account).

## Endpoints

- POST ${origin}/api/v1/screenshot: {"url": "https://example.com", "fullPage": true, "format": "png"} -> the image ($0.005; $0.01 with "style": "mockup")
- POST ${origin}/api/v1/html-to-screenshot: {"html": "<h1>Hi</h1>"} -> the image (same prices)
- POST ${origin}/api/v1/content: {"url": "https://example.com", "format": "markdown"} -> the page's main content as Markdown (or "text", "html"; "scope": "page" for the whole body; "links": true adds its links), its metadata, whether a browser ran, and a token estimate ($0.002; hidden text is left out); "screenshot": true (or screenshot fields) adds an image of the same page load for a screenshot's price ($0.005, $0.01 as a mockup); the page controls of a screenshot apply
- POST ${origin}/api/v1/animate: {"url": "https://example.com", "format": "mp4", "duration": 5} -> the page recorded scrolling from its top to its bottom as MP4 (or "webm", "gif", "webp"; "fps"; "scroll": {"to": "bottom" | a CSS selector | px, "easing", "holdStart", "holdEnd", "back"}; "html" instead of "url") ($0.02); the page controls of a screenshot apply
- POST ${origin}/api/v1/map: {"url": "https://example.com", "limit": 500, "include": ["https://example.com/docs/**"]} -> the site's URLs from its sitemaps and first pages' links, each with where it was found, normalised, in scope ("subdomains": true for the hosts under it; "exclude" globs), allowed by robots.txt ($0.001)
- POST ${origin}/api/v1/crawl: {"url": "https://example.com/docs/", "limit": 200, "formats": ["markdown"]} -> 202 {id}: the site read page by page (sitemaps and links, breadth first, "depth" hops, in scope, robots.txt obeyed, Crawl-delay honoured), each page's content kept; GET .../crawl/{id} reads its status, counts, cost and pages ("cursor" for more), DELETE cancels; "maxAge" (seconds) takes a page from this account's copy of it within that time, unasked ($0.001); "webhookUrl" gets a signed crawl.completed; $0.001 a page read statically, $0.002 rendered, skipped and failed pages free; limit x $0.002 held until it ends (API key)
- POST ${origin}/api/v1/metadata: {"url": "https://example.com"} -> title, description, social tags, favicon, logo, language, canonical URL, author, dates, feeds (free)
- POST ${origin}/api/v1/monitors: {"url": "https://example.com/pricing", "every": "1h", "ignoreSelectors": [".clock"], "webhookUrl": "https://..."} -> a page checked every "5m" to "1d" and compared with its last change, visually (rows aligned, so an inserted block is that block) and by text lines; a signed monitor.changed webhook when it changes; each check $0.005 ($0.002 with "mode": "text"), charged when it runs (API key). GET .../monitors/{id}/checks lists the outcomes, changed regions, text added and removed, and before/after/diff images; POST .../monitors/{id}/check runs one now
- GET ${origin}/api/v1/usage: balance and recent usage (API key)
- Add "responseFormat": "json" to get {image (base64), format, width, height, url, title, ...} instead of bytes.
- On screenshot, html-to-screenshot, content and animate: "capture": {"console": true, "network": true, "har": true} links what the page did (its console and uncaught errors, the requests that failed or were blocked, a HAR 1.2 file; free, secrets redacted): X-Console-Url... headers, or console/network/har fields in JSON; "proxy": "http://user:pass@host:port" (or https://, socks5://) loads the page through your own proxy (a proxy that fails is 502 PROXY_ERROR, free); "country": "DE" gives the page the locale and time zone of a visitor there, and "geo": "auto" with a proxy follows the country its credentials name (X-Geo-Country says which, or unknown)

## Paying

- API key: sign up with POST ${origin}/api/v1/signup {"email": "..."}, then send Authorization: Bearer <key>.
- x402, no account: call a paid endpoint without Authorization; the 402 answer's PAYMENT-REQUIRED header (x402 v2) and body (v1) say what to pay (USDC, exact scheme). Retry with PAYMENT-SIGNATURE (v2) or X-PAYMENT (v1). You are charged only when the render succeeds.
- Failed requests answer {"error": {"code", "message"}} and cost nothing.
- Safe retries: with a key, send Idempotency-Key: <uuid>; with x402, put a payment-identifier id in the payment (the 402 advertises the extension). A resend gets the first answer without paying twice.

## Machine descriptions

- x402 discovery manifest (every paid endpoint, its price and JSON Schema): ${origin}/.well-known/x402.json
- Every endpoint, field, rule and default (OpenAPI 3.1): ${origin}/openapi.json; for people: ${origin}/docs
- MCP server (Streamable HTTP, stateless): ${origin}/mcp, tools screenshot, html_to_screenshot, animate, read_page, scrape, map_site, crawl_site, get_crawl, metadata, create_monitor, list_monitors, check_monitor, get_check, usage; pay with Authorization: Bearer <key> or x402 in _meta["x402/payment"]
`;
