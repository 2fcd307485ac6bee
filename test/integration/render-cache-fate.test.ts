// A render stored for the cache and a refund never both happen (docs/api.md, "Render cache"): a
// screenshot handler run in process against the local stack's DynamoDB Local and s3rver, whose
// work is held up on purpose (the test hook: the handler's own steps, timed) after the output is
// stored, or before it is, so that the request runs out of time and is refunded. No browser: the
// capture is a fixed PNG, so only the cache, the ledger and the deadline are under test.
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from "aws-lambda";
import sharp from "sharp";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { buildApiGatewayEvent, lambdaContext } from "../../dev/events.js";
import type { Capture } from "../../lib/render/capture.js";
import { useSharedStackInProcess } from "../helpers/in-process.js";

type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;
type Hook = { before: () => Promise<void>; after: () => Promise<void> };

let handler: Handler;
let signup: Handler;
let hook: Hook;
let png: Buffer;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const NONE: Hook = { before: async () => undefined, after: async () => undefined };

beforeAll(async () => {
  useSharedStackInProcess();
  const { withHttp } = await import("../../lib/http/with-http.js");
  const { paidAccess } = await import("../../lib/http/paid-access.js");
  const { renderThrough } = await import("../../lib/http/render-cache.js");
  const { deliverCapture } = await import("../../lib/http/deliver.js");
  const { screenshotRequest } = await import("../../lib/api/schemas.js");
  signup = (await import("../../functions/signup.js")).handler as Handler;
  png = await sharp({ create: { width: 320, height: 200, channels: 3, background: "#ff0000" } })
    .png()
    .toBuffer();
  const capture: Capture = {
    body: png,
    format: "png",
    contentType: "image/png",
    width: 320,
    height: 200,
    url: null,
    title: "",
    truncated: false,
    clip: null,
    renderMs: 1,
    incomplete: null,
  };
  // The screenshot route's handler as functions/screenshot.ts writes it, with the hook around the render's end.
  handler = withHttp({ route: "screenshot", schema: screenshotRequest, access: paidAccess }, async ({ body, cache }) => {
    const shot = await renderThrough(cache, async () => {
      await hook.before();
      return capture;
    });
    await hook.after();
    return deliverCapture(shot.capture, body.responseFormat, shot.headers);
  }) as Handler;
});

async function account() {
  const res = await signup(
    buildApiGatewayEvent(
      {
        method: "POST",
        url: "/api/v1/signup",
        headers: { "content-type": "application/json" },
        body: Buffer.from(JSON.stringify({ email: `fate-${crypto.randomUUID()}@cache.test` })),
        sourceIp: `203.0.113.${Math.floor(Math.random() * 250)}`,
      },
      "POST /api/v1/signup",
    ),
    lambdaContext("signup", 256, 10),
  );
  return (JSON.parse(res.body!) as { api_key: string }).api_key;
}

/** One screenshot request of `key` with a Lambda that has `seconds` (its deadline keeps 2 s for answering). */
async function shoot(key: string, cacheKey: string, seconds = 10) {
  const event = buildApiGatewayEvent(
    {
      method: "POST",
      url: "/api/v1/screenshot",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: Buffer.from(JSON.stringify({ url: "https://example.com/", width: 320, height: 200, deviceScaleFactor: 1, cacheTtl: 600, cacheKey })),
      sourceIp: "127.0.0.1",
    },
    "POST /api/v1/screenshot",
  );
  const res = await handler(event, lambdaContext("screenshot", 2048, seconds));
  const code = res.statusCode === 200 ? null : (JSON.parse(res.body!) as { error: { code: string } }).error.code;
  return { status: res.statusCode, code, cache: res.headers?.["X-Cache"], charged: res.headers?.["X-Charged-Micro-USD"] };
}

describe("a stored render and a refund never both happen", () => {
  it("the output stored, then the answer late: refunded, and the same request afterwards is a paid miss, not a free hit", async () => {
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    const key = await account();
    const cacheKey = crypto.randomUUID();
    // 3 s of Lambda less the 2 s kept for answering: the work has 1 s, and is held up 2.5 s after the store.
    hook = { before: NONE.before, after: () => sleep(2_500) };
    expect(await shoot(key, cacheKey, 3)).toMatchObject({ status: 504, code: "RENDER_TIMEOUT", charged: "0" });
    hook = NONE;
    expect(await shoot(key, cacheKey)).toMatchObject({ status: 200, cache: "MISS", charged: "5000" });
    // That one was delivered: now, and only now, a hit.
    expect(await shoot(key, cacheKey)).toMatchObject({ status: 200, cache: "HIT", charged: "0" });
  }, 30_000);

  it("the request refunded first, the output stored after it: still no free hit", async () => {
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    const key = await account();
    const cacheKey = crypto.randomUUID();
    // The render itself outlives the request (1 s of work): it is stored after the 504 and its refund.
    let stored!: () => void;
    const late = new Promise<void>((resolve) => (stored = resolve));
    hook = { before: () => sleep(2_000), after: async () => stored() };
    expect(await shoot(key, cacheKey, 3)).toMatchObject({ status: 504, code: "RENDER_TIMEOUT", charged: "0" });
    await late;
    hook = NONE;
    expect(await shoot(key, cacheKey)).toMatchObject({ status: 200, cache: "MISS", charged: "5000" });
  }, 30_000);
});
