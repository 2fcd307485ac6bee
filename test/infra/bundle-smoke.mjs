// Invokes a bundled function (as `sst deploy` built it) the way Lambda would, with the layers'
// contents where the deployed environment variables point. Prints the result as JSON.
// Usage: node bundle-smoke.mjs <artifact dir> <function name> <json body> <API key>
const [dir, name, body, apiKey] = process.argv.slice(2);
const { handler } = await import(`${dir}/functions/${name}.mjs`);
const path = name === "mcp" ? "/mcp" : `/api/v1/${name}`;
const event = {
  version: "2.0",
  rawPath: path,
  // The MCP transport's Accept; the REST routes ignore it.
  headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${apiKey}`, host: "bundle.test" },
  requestContext: { requestId: `bundle-smoke-${Date.now()}`, timeEpoch: Date.now(), http: { method: "POST", path, sourceIp: "127.0.0.1" } },
  body,
  isBase64Encoded: false,
};
const result = await handler(event, { awsRequestId: "bundle-smoke", getRemainingTimeInMillis: () => 25_000 });
process.stdout.write(JSON.stringify(result));
process.exit(0);
