// The MCP screenshot tool against the REST call in `npm run bench`, through the whole local stack:
// the same page and viewport (/simple, 1280x800 at 2x), REST answering the PNG inline, MCP through
// the official SDK client (its answer adds a JPEG preview and the upload behind its link). The two
// alternate, so machine noise hits them alike. Ratio: mcp_vs_rest (p50 over p50).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type Sample, stats } from "./stats.js";

export async function benchMcp(options: { fixturesUrl: string; serviceUrl: string; apiKey: string; rounds: number }) {
  const args = { url: `${options.fixturesUrl}/simple`, width: 1280, height: 800, deviceScaleFactor: 2 };
  const authorization = `Bearer ${options.apiKey}`;
  const client = new Client({ name: "shotline-bench", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", options.serviceUrl), { requestInit: { headers: { authorization } } }));
  const scenarios = {
    rest: async () => {
      const res = await fetch(`${options.serviceUrl}/api/v1/screenshot`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization },
        body: JSON.stringify(args),
      });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`REST answered ${res.status}`);
    },
    mcp: async () => {
      const result = await client.callTool({ name: "screenshot", arguments: args });
      if (result.isError) throw new Error(`MCP answered ${JSON.stringify(result.content)}`);
    },
  };
  const samples: Record<keyof typeof scenarios, Sample> = { rest: [], mcp: [] };
  await scenarios.rest();
  await scenarios.mcp();
  for (let round = 0; round < options.rounds; round++) {
    for (const name of round % 2 ? (["rest", "mcp"] as const) : (["mcp", "rest"] as const)) {
      const started = performance.now();
      await scenarios[name]();
      samples[name].push(performance.now() - started);
    }
  }
  await client.close();
  const results = { rest: stats(samples.rest), mcp: stats(samples.mcp) };
  const ratios = { mcp_vs_rest: Number((results.mcp.p50_ms / results.rest.p50_ms).toFixed(2)) };
  const print = () =>
    console.log(
      `MCP screenshot p50 ${results.mcp.p50_ms} ms (p95 ${results.mcp.p95_ms}), REST ${results.rest.p50_ms} ms (p95 ${results.rest.p95_ms}): mcp_vs_rest ${ratios.mcp_vs_rest}`,
    );
  return { results, ratios, print };
}
