import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { isJSONRPCRequest, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

// `npm run -s mcp`: Shotline as a local stdio MCP server, for desktop agents that start their tools
// as processes (docs/agents.md, "MCP"). Every message is forwarded, as it is, to a Shotline's
// POST /mcp, with the API key as Authorization; the answers come back on stdout. Nothing else is
// written to stdout (it is the protocol's); problems go to stderr.
//   SHOTLINE_URL      the service, default http://127.0.0.1:3000 (npm run dev)
//   SHOTLINE_API_KEY  the key renders are charged to (without it: free tools only, or x402 in _meta)

const base = process.env.SHOTLINE_URL ?? "http://127.0.0.1:3000";
const key = process.env.SHOTLINE_API_KEY;

const local = new StdioServerTransport();
const remote = new StreamableHTTPClientTransport(new URL("/mcp", base), {
  requestInit: { headers: key ? { authorization: `Bearer ${key}` } : {} },
});

local.onmessage = (message: JSONRPCMessage) => {
  remote.send(message).catch(async (error: unknown) => {
    const reason = error instanceof Error ? error.message : String(error);
    process.stderr.write(`shotline-mcp: ${base}/mcp: ${reason}\n`);
    // A request must be answered: the agent gets the failure as a JSON-RPC error, not a hang.
    if (isJSONRPCRequest(message)) await local.send({ jsonrpc: "2.0", id: message.id, error: { code: -32603, message: `Shotline at ${base}: ${reason}` } });
  });
};
remote.onmessage = (message) => void local.send(message);
remote.onerror = (error) => process.stderr.write(`shotline-mcp: ${error.message}\n`);
local.onclose = () => void remote.close().finally(() => process.exit(0));

await remote.start();
await local.start();
