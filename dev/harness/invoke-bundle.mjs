// Invokes a bundled function (as `sst deploy` built it) the way Lambda would, in this fresh process:
// INIT (importing the handler's module, top-level awaits included), then one invocation.
// Usage: node invoke-bundle.mjs <artifact dir> <function name> <json body> <API key>
// Prints one JSON line as soon as the answer is there: { result, init_ms, invoke_ms }, where init_ms
// runs from this process's start (performance.timeOrigin) to the end of INIT.
const [dir, name, body, apiKey] = process.argv.slice(2);
const { handler } = await import(`${dir}/functions/${name}.mjs`);
const initMs = performance.now();
const path = name === "mcp" ? "/mcp" : `/api/v1/${name}`;
const event = {
  version: "2.0",
  rawPath: path,
  // The MCP transport's Accept; the REST routes ignore it.
  headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${apiKey}`, host: "bundle.test" },
  // As API Gateway sends it: the domain it was called on (the Host here) among the rest.
  requestContext: {
    requestId: `bundle-${Date.now()}`,
    domainName: "bundle.test",
    timeEpoch: Date.now(),
    http: { method: "POST", path, sourceIp: "127.0.0.1" },
  },
  body,
  isBase64Encoded: false,
};
const result = await handler(event, { awsRequestId: `bundle-${Date.now()}`, getRemainingTimeInMillis: () => 25_000 });
const invokeMs = performance.now() - initMs;
// Exit once the line is written: a pipe takes a long line (a large image) in several writes, and
// process.exit() would cut it short.
process.stdout.write(`${JSON.stringify({ result, init_ms: Math.round(initMs), invoke_ms: Math.round(invokeMs) })}\n`, () => process.exit(0));
