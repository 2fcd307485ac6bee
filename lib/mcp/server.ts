import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { CallToolRequestSchema, type CallToolResult, ErrorCode, ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from "aws-lambda";
import { z } from "zod";
import type { Deadline } from "../deadline.js";
import { servedHost } from "../http/hosts.js";
import type { HttpResponse } from "../http/responses.js";
import { type Tool, tools } from "./tools.js";

// The MCP server at POST /mcp (docs/agents.md, "MCP"): Streamable HTTP, stateless (no session: every
// POST stands alone, so it runs as one more function of the route table), JSON answers (no SSE).
// A tool call runs its route's pipeline in process (lib/mcp/tools.ts) and its HTTP answer becomes
// the tool result; x402 rides in _meta per the x402 specification's MCP transport (tool-result binding).

/** A JSON-RPC message: any JSON object (its shape is the MCP SDK's to check, with JSON-RPC's own errors). */
export const mcpMessage = z.record(z.string(), z.unknown());

/** The MCP request as the route's handler received it. */
export interface McpCall {
  /** Lower-case names. */
  readonly headers: Readonly<Record<string, string>>;
  /** The JSON-RPC message (an object: batches were removed from MCP in 2025-06-18). */
  readonly body: unknown;
  readonly requestId: string;
  readonly sourceIp: string;
  /** The domain API Gateway was called on. */
  readonly domain: string;
  readonly deadline: Deadline;
}

const INSTRUCTIONS =
  'Shotline captures web pages and HTML as images or PDFs and reads page metadata. Renders cost $0.005 ($0.01 for a mockup), charged only on success: send an API key as Authorization: Bearer, or pay each call with x402 (USDC): a call without either answers the payment requirements as an error result; sign one and call again with it in _meta["x402/payment"].';

/** Answers one MCP POST. */
export async function serveMcp(call: McpCall): Promise<HttpResponse> {
  // DNS rebinding (the MCP transport's rule): a page of another site whose name now points at this
  // server must not drive it from a visitor's browser. Its requests name that site in Host (and
  // Origin), so both must be a host this service is reached on.
  const origin = call.headers.origin;
  if (!servedHost(call.headers.host ?? null, call.domain))
    return jsonRpcError(403, "Forbidden: this Host is not one the MCP server answers on (PUBLIC_HOSTS).");
  if (origin !== undefined && !servedHost(hostOf(origin), call.domain)) return jsonRpcError(403, "Forbidden: this Origin may not call the MCP server.");
  const server = new Server({ name: "shotline", title: "Shotline", version: "1.0.0" }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, () => {
    listing ??= tools.map(listed);
    return { tools: listing };
  });
  server.setRequestHandler(CallToolRequestSchema, ({ params }) => {
    const tool = tools.find((t) => t.name === params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool "${params.name}"; tools/list names them.`);
    return callTool(tool, params.arguments ?? {}, params._meta ?? {}, call);
  });
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    const request = new Request("http://mcp.invalid/mcp", {
      method: "POST",
      headers: pick(call.headers, ["accept", "content-type", "mcp-protocol-version"]),
    });
    const response = await transport.handleRequest(request, { parsedBody: call.body });
    return {
      kind: "text",
      status: response.status,
      body: await response.text(),
      contentType: response.headers.get("content-type") ?? "application/json",
      headers: {},
    };
  } finally {
    await server.close();
  }
}

const hostOf = (origin: string): string | null => {
  try {
    return new URL(origin).host;
  } catch {
    return null;
  }
};

const pick = (headers: Readonly<Record<string, string>>, names: readonly string[]) =>
  Object.fromEntries(names.filter((name) => headers[name] !== undefined).map((name) => [name, headers[name]!]));

const jsonRpcError = (status: number, message: string): HttpResponse => ({
  kind: "json",
  status,
  body: { jsonrpc: "2.0", error: { code: -32000, message }, id: null },
  headers: {},
});

/** tools/list's answer, made once per process (zod's JSON Schema conversion is not free). */
let listing: ReturnType<typeof listed>[] | undefined;

/** A tool as tools/list shows it. */
const listed = (tool: Tool) => ({
  name: tool.name,
  title: tool.title,
  description: tool.description,
  inputSchema: tool.inputSchema(),
  annotations: { title: tool.title, readOnlyHint: !tool.changes, openWorldHint: tool.name !== "usage", idempotentHint: !tool.charges && !tool.changes },
});

/**
 * Runs `tool`'s pipeline with what the MCP request carries: its Authorization, or the x402 payment
 * from `_meta["x402/payment"]` as the PAYMENT-SIGNATURE header. The pipeline's time ends with this
 * request's, so that its answer (or its own timeout error) always comes back in time.
 */
async function callTool(tool: Tool, args: Record<string, unknown>, meta: Record<string, unknown>, call: McpCall): Promise<CallToolResult> {
  const payment = meta["x402/payment"];
  const headers: Record<string, string> = {
    ...pick(call.headers, ["authorization", "host", "x-forwarded-proto", "user-agent"]),
    "content-type": "application/json",
    ...(payment === undefined ? {} : { "payment-signature": Buffer.from(JSON.stringify(payment)).toString("base64") }),
  };
  const now = new Date();
  const event: APIGatewayProxyEventV2 = {
    version: "2.0",
    routeKey: "POST /mcp",
    rawPath: "/mcp",
    rawQueryString: "",
    headers,
    requestContext: {
      accountId: "mcp",
      apiId: "mcp",
      domainName: headers.host ?? "",
      domainPrefix: "",
      http: { method: tool.method, path: "/mcp", protocol: "HTTP/1.1", sourceIp: call.sourceIp, userAgent: headers["user-agent"] ?? "" },
      requestId: call.requestId,
      routeKey: "POST /mcp",
      stage: "$default",
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    body: JSON.stringify(args),
    isBase64Encoded: false,
  };
  const context = { getRemainingTimeInMillis: () => call.deadline.at - Date.now(), awsRequestId: call.requestId } as Context;
  return toolResult(tool, await tool.pipeline(event, context));
}

/** The value of `name` in an answer's headers, whatever its case. */
const headerOf = (answer: APIGatewayProxyStructuredResultV2, name: string): string | undefined =>
  Object.entries(answer.headers ?? {})
    .find(([key]) => key.toLowerCase() === name)?.[1]
    ?.toString();

const decoded = (header: string) => JSON.parse(Buffer.from(header, "base64").toString("utf8")) as Record<string, unknown>;

/** A JSON value as a tool's text and structured content. */
const structured = (value: Record<string, unknown>, isError: boolean): CallToolResult => ({
  content: [{ type: "text", text: JSON.stringify(value) }],
  structuredContent: value,
  ...(isError ? { isError: true } : {}),
});

/** The rendered envelope of lib/http/deliver.ts's deliverForTool. */
type Rendered = Record<string, unknown> & {
  downloadUrl: string;
  expiresAt: string;
  format: string;
  contentType: string;
  width: number;
  height: number;
  bytes: number;
  url: string | null;
  title: string;
  preview: { mimeType: string; data: string; width: number; height: number } | null;
  /** An animation's. */
  frames?: number;
  durationMs?: number;
};

/**
 * A pipeline's HTTP answer as an MCP tool result: a 402 as the x402 MCP transport's payment-required
 * result (PaymentRequired in structuredContent and as JSON text), any other error as an error result
 * carrying the REST error body, a render as its preview, a summary and a link. `_meta` carries the
 * x402 settlement and what the call cost.
 */
function toolResult(tool: Tool, answer: APIGatewayProxyStructuredResultV2): CallToolResult {
  const status = answer.statusCode ?? 200;
  const required = headerOf(answer, "payment-required");
  if (status === 402 && required) return structured(decoded(required), true);
  const body = JSON.parse(answer.body ?? "{}") as Record<string, unknown>;
  const settled = headerOf(answer, "payment-response");
  const charged = headerOf(answer, "x-charged-micro-usd");
  const balance = headerOf(answer, "x-balance-micro-usd");
  const meta = {
    ...(settled ? { "x402/payment-response": decoded(settled) } : {}),
    ...(charged === undefined ? {} : { "shotline/charged-micro-usd": Number(charged) }),
    ...(balance === undefined ? {} : { "shotline/balance-micro-usd": Number(balance) }),
  };
  const result =
    status >= 400
      ? structured(body, true)
      : tool.renders
        ? rendered(body as Rendered)
        : tool.asText
          ? { content: [{ type: "text" as const, text: tool.asText(body) }], structuredContent: body }
          : structured(body, false);
  return Object.keys(meta).length ? { ...result, _meta: meta } : result;
}

function rendered({ preview, ...output }: Rendered): CallToolResult {
  const name = `${output.frames === undefined ? "screenshot" : "animation"}.${output.format === "jpeg" ? "jpg" : output.format}`;
  const cropped = preview !== null && preview.height < Math.round((output.height * preview.width) / output.width);
  const frames = output.frames === undefined ? "" : ` ${output.frames} frames, ${(output.durationMs ?? 0) / 1000} s,`;
  const summary = [
    `${output.format.toUpperCase()} ${output.width}x${output.height} px,${frames} ${output.bytes} bytes${output.title ? ` of "${output.title}"` : ""}${output.url ? ` (${output.url})` : ""}.`,
    preview ? `Preview: ${preview.width}x${preview.height} JPEG${cropped ? " (the top of the page)" : ""}.` : "",
    output.incomplete ? "The page's load event never came: captured as it stood at the page-load limit." : "",
    `Full resolution until ${output.expiresAt}: ${output.downloadUrl}`,
  ].filter(Boolean);
  return {
    content: [
      ...(preview ? [{ type: "image" as const, data: preview.data, mimeType: preview.mimeType }] : []),
      { type: "text", text: summary.join("\n") },
      { type: "resource_link", uri: output.downloadUrl, name, mimeType: output.contentType },
    ],
    structuredContent: { ...output, preview: preview && { mimeType: preview.mimeType, width: preview.width, height: preview.height } },
  };
}
