import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from "aws-lambda";
import { buildApiGatewayEvent, lambdaContext } from "../../dev/events.js";

type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

/** Invokes a Lambda handler directly with the event API Gateway would send (no server involved). */
export async function invoke(
  handler: Handler,
  request: {
    method: string;
    path: string;
    body?: string | Buffer;
    headers?: Record<string, string>;
    pathParameters?: Record<string, string>;
    timeoutSeconds?: number;
    arrivedAt?: number;
  },
) {
  const body = typeof request.body === "string" ? Buffer.from(request.body) : (request.body ?? Buffer.alloc(0));
  const event = buildApiGatewayEvent(
    { method: request.method, url: request.path, headers: { "content-type": "application/json", ...request.headers }, body, sourceIp: "127.0.0.1" },
    "test",
  );
  if (request.arrivedAt !== undefined) event.requestContext.timeEpoch = request.arrivedAt;
  if (request.pathParameters) event.pathParameters = request.pathParameters;
  const result = await handler(event, lambdaContext("test", 256, request.timeoutSeconds ?? 10));
  const text = result.body === undefined ? "" : Buffer.from(result.body, result.isBase64Encoded ? "base64" : "utf8").toString("utf8");
  return { event, result, headers: result.headers ?? {}, status: result.statusCode, json: () => JSON.parse(text) as Record<string, any> };
}
