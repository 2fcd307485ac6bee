import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolRequest, CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { x402Client } from "@x402/core/client";

// MCP clients for the tests and the benchmark: the official SDK's client over Streamable HTTP, and
// a paying one on top of it, built on @x402/core (with @x402/evm's scheme registered by the caller),
// following the x402 specification's MCP transport (tool-result binding).

/** The official MCP client connected to `baseUrl`/mcp, with `headers` on every request (an API key). */
export async function mcpClient(baseUrl: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: "shotline-tests", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", baseUrl), { requestInit: { headers } }));
  return client;
}

/** The x402 PaymentRequired of a tool result, as the transport carries it, or null. */
export function paymentRequiredOf(result: CallToolResult): Record<string, any> | null {
  if (!result.isError) return null;
  const structured = result.structuredContent as Record<string, any> | undefined;
  if (structured?.x402Version !== undefined && Array.isArray(structured.accepts)) return structured;
  const first = result.content[0];
  if (first?.type !== "text") return null;
  try {
    const parsed = JSON.parse(first.text) as Record<string, any>;
    return parsed.x402Version !== undefined && Array.isArray(parsed.accepts) ? parsed : null;
  } catch {
    return null;
  }
}

/**
 * Calls a tool, paying with x402 when it answers that payment is required: the payment made for the
 * first of its requirements is sent again in `_meta["x402/payment"]`. `payments` records each one sent.
 */
export async function callPaying(client: Client, payer: x402Client, params: CallToolRequest["params"], payments: unknown[] = []): Promise<CallToolResult> {
  const first = (await client.callTool(params)) as CallToolResult;
  const required = paymentRequiredOf(first);
  if (!required) return first;
  const payment = await payer.createPaymentPayload(required as never);
  payments.push(payment);
  return (await client.callTool({ ...params, _meta: { ...params._meta, "x402/payment": payment } })) as CallToolResult;
}
