import { escapeHtml } from "../text.js";
import { inlineHash, pageHeaders } from "./headers.js";
import { openApiDocument } from "./openapi.js";

// GET /docs: the OpenAPI document as one HTML page, rendered here (no script, no network): each
// operation with its fields (type, default, rule) and answers. The Content-Security-Policy is the
// dashboard's, stricter still: one inline stylesheet by hash, nothing else.

/** The parts of JSON Schema and OpenAPI the page shows. */
interface Schema {
  readonly type?: string;
  readonly enum?: readonly unknown[];
  readonly minimum?: number;
  readonly maximum?: number;
  readonly maxLength?: number;
  readonly maxItems?: number;
  readonly items?: Schema;
  readonly anyOf?: readonly Schema[];
  readonly properties?: Readonly<Record<string, Schema>>;
  readonly required?: readonly string[];
  readonly default?: unknown;
}
interface Operation {
  readonly operationId: string;
  readonly summary?: string;
  readonly description?: string;
  readonly requestBody?: {
    readonly content?: Readonly<Record<string, { schema: Schema; example?: unknown; examples?: Readonly<Record<string, { value: unknown }>> }>>;
  };
  readonly responses?: Readonly<Record<string, { readonly description?: string }>>;
}

/** Escaped text with its `code spans` as <code>. */
const prose = (text: unknown) => escapeHtml(text).replace(/`([^`]+)`/g, "<code>$1</code>");

const STYLE = `body{font:15px/1.55 system-ui,-apple-system,"Segoe UI",sans-serif;color:#0f172a;max-width:1040px;margin:0 auto;padding:24px}
h1{margin:0 0 4px}h2{margin:40px 0 6px;font-size:20px;border-top:1px solid #e2e8f0;padding-top:24px}code{font:13px ui-monospace,monospace}
.method{display:inline-block;min-width:52px;padding:2px 8px;border-radius:6px;background:#4f46e5;color:#fff;font:600 12px ui-monospace,monospace;text-align:center}
.get{background:#059669}.patch{background:#d97706}table{border-collapse:collapse;width:100%;margin:8px 0}th,td{text-align:left;vertical-align:top;padding:6px 8px;border-bottom:1px solid #e2e8f0}
th{font-size:13px;color:#475569}td:first-child{white-space:nowrap}.muted{color:#64748b}nav{display:flex;flex-wrap:wrap;gap:4px 14px}
.scroll{overflow-x:auto}pre{overflow-x:auto;background:#f8fafc;padding:10px;border-radius:8px}
@media (max-width:640px){body{padding:14px;font-size:14px}td,th{padding:4px}td:first-child{white-space:normal;overflow-wrap:anywhere}td:last-child{overflow-wrap:anywhere}}`;

/** A JSON Schema's type and rule in a few words. */
function rule(schema: Schema): { type: string; rule: string } {
  if (schema.anyOf) {
    const parts = schema.anyOf.map(rule);
    return {
      type: parts.map((p) => p.type).join(" or "),
      rule: parts
        .map((p) => p.rule)
        .filter(Boolean)
        .join("; "),
    };
  }
  const type = schema.type === "array" ? `${rule(schema.items ?? {}).type}[]` : String(schema.type ?? (schema.enum ? "string" : "object"));
  const rules: string[] = [];
  if (schema.enum) rules.push(schema.enum.map((v) => JSON.stringify(v)).join(", "));
  if (schema.minimum !== undefined || schema.maximum !== undefined) rules.push(`${schema.minimum ?? "…"} to ${schema.maximum ?? "…"}`);
  if (schema.maxLength !== undefined) rules.push(`at most ${schema.maxLength} characters`);
  if (schema.maxItems !== undefined) rules.push(`at most ${schema.maxItems} items`);
  if (schema.properties && type === "object") rules.push(`{${Object.keys(schema.properties).join(", ")}}`);
  return { type, rule: rules.join("; ") };
}

function fields(schema: Schema): string {
  const required = new Set<string>(schema.required ?? []);
  const rows = Object.entries(schema.properties ?? {}).map(([name, field]) => {
    const { type, rule: text } = rule(field);
    const fallback = required.has(name) ? "required" : field.default === undefined ? "" : JSON.stringify(field.default);
    return `<tr><td><code>${escapeHtml(name)}</code></td><td>${escapeHtml(type)}</td><td>${escapeHtml(fallback)}</td><td>${escapeHtml(text)}</td></tr>`;
  });
  return `<div class="scroll"><table><tr><th>Field</th><th>Type</th><th>Default</th><th>Rule</th></tr>${rows.join("")}</table></div>`;
}

function operation(path: string, method: string, op: Operation): string {
  const body = op.requestBody?.content?.["application/json"];
  const examples = body ? [body.example, ...Object.values(body.examples ?? {}).map((e) => e.value)].filter(Boolean) : [];
  const answers = Object.entries(op.responses ?? {})
    .map(([status, answer]) => `<tr><td><code>${escapeHtml(status)}</code></td><td>${prose(answer.description ?? "")}</td></tr>`)
    .join("");
  return `<h2 id="${escapeHtml(op.operationId)}"><span class="method ${escapeHtml(method)}">${escapeHtml(method.toUpperCase())}</span> <code>${escapeHtml(path)}</code></h2>
<p><b>${escapeHtml(op.summary ?? "")}</b>${op.description ? ` ${prose(op.description)}` : ""}</p>
${body ? fields(body.schema) : ""}${examples.map((e) => `<p class="muted">Example</p><pre><code>${escapeHtml(JSON.stringify(e, null, 2))}</code></pre>`).join("")}
<div class="scroll"><table><tr><th>Status</th><th>Answer</th></tr>${answers}</table></div>`;
}

// The page the crawler's User-Agent names (docs/crawl.md, "Who it is"): what it is and how it behaves, for a site's owner.
const CRAWLER = `<h2 id="crawler">The Shotline crawler</h2>
<p>A request whose User-Agent names <code>Shotline/1.0</code> comes from this service reading a site for one of its customers: a map of the site's URLs from its sitemaps and first pages.</p>
<ul><li>It obeys robots.txt (RFC 9309) for the product token <code>Shotline</code>, or <code>*</code>: <code>User-agent: Shotline</code> and <code>Disallow: /</code> keep it out of a whole site.</li>
<li>It honours <code>Crawl-delay</code> up to 10 seconds between requests, and reads nothing from a site whose robots.txt answers a server error.</li>
<li>It never reaches private addresses, and follows a page's <code>nofollow</code> robots meta tag.</li></ul>`;

let page: { html: string; headers: Record<string, string> } | undefined;

/** The reference page and its response headers. */
export function referencePage(origin: string, version: string): { html: string; headers: Record<string, string> } {
  if (page) return page;
  const { paths } = openApiDocument(origin, version) as { paths: Record<string, Record<string, Operation>> };
  const operations = Object.entries(paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ path, method, op })));
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Shotline API reference</title><style>${STYLE}</style></head><body>
<h1>Shotline API</h1><p class="muted">Version ${escapeHtml(version)}. Machine-readable: <a href="/openapi.json">/openapi.json</a> · agents: <a href="/llms.txt">/llms.txt</a>, <a href="/.well-known/x402.json">x402 manifest</a></p>
<p>Pay per call with <code>Authorization: Bearer &lt;API key&gt;</code> or, without one, with x402 (USDC): the 402 answer says what to pay. Every error is <code>{"error": {"code", "message"}}</code>; a failed request costs nothing.</p>
<nav>${operations.map(({ op }) => `<a href="#${escapeHtml(op.operationId)}">${escapeHtml(op.operationId)}</a>`).join("")}</nav>
${operations.map(({ path, method, op }) => operation(path, method, op)).join("\n")}
${CRAWLER}
</body></html>`;
  page = { html, headers: pageHeaders([`style-src ${inlineHash(STYLE)}`], "public, max-age=300") };
  return page;
}
