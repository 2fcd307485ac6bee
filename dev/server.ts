import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from "aws-lambda";
import { renderStats } from "../lib/render/browser.js";
import { fallbackRoute, matchRoute, pathParams } from "../lib/routes.js";
import { lambdaContext, toApiGatewayEvent } from "./events.js";

type LambdaHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

const functionsDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../functions");

// API Gateway HTTP API limits, reproduced so that local behaviour matches production.
const MAX_PAYLOAD_BYTES = 10 * 1024 * 1024;
const GATEWAY_TIMEOUT_MS = 30_000;

const handlers = new Map<string, Promise<LambdaHandler>>();

/** The `handler` export of functions/<id>.ts, imported once (like a warm Lambda container); a route's unless said otherwise. */
export function loadHandler<H = LambdaHandler>(id: string): Promise<H> {
  let loaded = handlers.get(id);
  if (!loaded) {
    loaded = import(pathToFileURL(path.join(functionsDir, `${id}.ts`)).href).then((m: { handler: LambdaHandler }) => m.handler);
    handlers.set(id, loaded);
  }
  return loaded as Promise<H>;
}

function readBody(request: IncomingMessage): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_PAYLOAD_BYTES) chunks.push(chunk);
    });
    request.on("end", () => resolve(size > MAX_PAYLOAD_BYTES ? null : Buffer.concat(chunks)));
    request.on("error", reject);
  });
}

function send(response: ServerResponse, result: APIGatewayProxyStructuredResultV2) {
  const body = result.body === undefined ? Buffer.alloc(0) : Buffer.from(result.body, result.isBase64Encoded ? "base64" : "utf8");
  response.writeHead(result.statusCode ?? 200, { ...result.headers, "Content-Length": String(body.length) });
  response.end(body);
}

const json = (statusCode: number, body: unknown): APIGatewayProxyStructuredResultV2 => ({
  statusCode,
  headers: { "Content-Type": "application/json" },
  body: JSON.stringify(body),
});

// What API Gateway itself answers (not our handlers) when a limit is hit.
const gatewayError = (statusCode: number, message: string) => json(statusCode, { message });

/** Handles one request like API Gateway + Lambda: route, build the v2 event, invoke, serialize. */
async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
  const body = await readBody(request);
  if (body === null) return send(response, gatewayError(413, "Request Entity Too Large"));
  const method = request.method ?? "GET";
  const rawPath = new URL(request.url ?? "/", "http://127.0.0.1").pathname;
  // The local stack only (never deployed): what the renderer holds, for the hostile-page tests and `npm run load`.
  if (method === "GET" && rawPath === "/__dev/render-stats") {
    // With --expose-gc (the hostile-page tests, `npm run load`), the heap is measured after a full collection.
    (globalThis as { gc?: () => void }).gc?.();
    return send(response, json(200, { ...renderStats(), heapBytes: process.memoryUsage().heapUsed }));
  }
  const { route } = matchRoute(method, rawPath);
  const target = route ?? fallbackRoute;
  const event = toApiGatewayEvent(request, body, route ? `${route.method} ${route.path}` : "$default");
  if (route?.path.includes("{")) event.pathParameters = pathParams(route.path, rawPath) ?? {};
  const context = lambdaContext(`shotline-local-${target.id}`, target.memoryMB, target.timeoutSeconds);
  const handler = await loadHandler(target.id);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<APIGatewayProxyStructuredResultV2>((resolve) => {
    timer = setTimeout(() => resolve(gatewayError(504, "Endpoint request timed out")), Math.min(GATEWAY_TIMEOUT_MS, target.timeoutSeconds * 1000));
  });
  try {
    send(response, await Promise.race([handler(event, context), timedOut]));
  } finally {
    clearTimeout(timer);
  }
}

/** Starts the local API on 127.0.0.1:`port` (0 = any free port). */
export function startLocalServer(port: number): Promise<Server> {
  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      // Handlers answer every error themselves; reaching here means the local server itself broke.
      console.error("local server error", error);
      if (!response.headersSent) send(response, gatewayError(500, "Internal Server Error"));
      else response.destroy();
    });
  });
  // Idle keep-alive sockets are closed by the client first (fetch keeps them ~4 s), never by us
  // just as a client reuses one: with Node's 5 s, a busy test run saw "other side closed" on a
  // reused socket. (Ctrl-C does not wait for them: the stack's stop closes every connection.)
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve(server));
  });
}
