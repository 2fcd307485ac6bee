import { withHttp } from "../lib/http/with-http.js";
import { mcpMessage, serveMcp } from "../lib/mcp/server.js";

// POST /mcp: the MCP server (Streamable HTTP, stateless); each tool call applies its own route's access and price.
export const handler = withHttp({ route: "mcp", schema: mcpMessage }, async ({ headers, body, requestId, sourceIp, domain, deadline }) =>
  serveMcp({ headers, body, requestId, sourceIp, domain, deadline }),
);
