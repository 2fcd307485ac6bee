// Billing at the level of Lambda invocations: the handlers called directly, as API Gateway would,
// against the local stack's DynamoDB Local (the environment is set before any module reads it).

import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from "aws-lambda";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { buildApiGatewayEvent, lambdaContext } from "../../dev/events.js";
import { useSharedStackInProcess } from "../helpers/in-process.js";
import { allUsageEntries } from "../helpers/ledger.js";

type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;
let htmlHandler: Handler;
let signupHandler: Handler;
let closeBrowser: () => Promise<void>;

const SIGNUP_LIMIT = 3;
const AUTH_FAILURES = 5;

beforeAll(async () => {
  useSharedStackInProcess({ SIGNUP_LIMIT_PER_HOUR: String(SIGNUP_LIMIT), AUTH_FAILURES_PER_MINUTE: String(AUTH_FAILURES) });
  htmlHandler = (await import("../../functions/html-to-screenshot.js")).handler as Handler;
  signupHandler = (await import("../../functions/signup.js")).handler as Handler;
  closeBrowser = (await import("../../lib/render/browser.js")).closeBrowser;
  return () => closeBrowser();
});

const event = (path: string, body: unknown, headers: Record<string, string> = {}, sourceIp = "127.0.0.1") =>
  buildApiGatewayEvent(
    { method: "POST", url: path, headers: { "content-type": "application/json", ...headers }, body: Buffer.from(JSON.stringify(body)), sourceIp },
    `POST ${path}`,
  );

describe("invocations", () => {
  it("charges a replayed invocation (same API Gateway request id) once", async () => {
    // Its own client IP: signups are counted per IP in the table all test files share.
    const signup = await signupHandler(
      event("/api/v1/signup", { email: `replay-${Date.now()}@billing.test` }, {}, "203.0.113.77"),
      lambdaContext("signup", 256, 10),
    );
    expect(signup.statusCode).toBe(201);
    const { api_key: key, account_id: accountId } = JSON.parse(signup.body!) as { api_key: string; account_id: string };
    const request = event(
      "/api/v1/html-to-screenshot",
      { html: "<p>once</p>", width: 320, height: 100, deviceScaleFactor: 1 },
      { authorization: `Bearer ${key}` },
    );
    const first = await htmlHandler(request, lambdaContext("html", 2048, 30));
    const errors = vi.spyOn(console, "error");
    const replay = await htmlHandler(structuredClone(request), lambdaContext("html", 2048, 30));
    // Nothing failed quietly on the way (marking the replay's charge delivered included).
    expect(errors).not.toHaveBeenCalled();
    errors.mockRestore();
    expect(first.statusCode).toBe(200);
    expect(replay.statusCode).toBe(200);
    const charges = (await allUsageEntries(accountId)).filter((e) => e.kind === "charge");
    // Delivered by both (the replay repeats the first's delivery with the same input and token).
    expect(charges).toEqual([expect.objectContaining({ requestId: request.requestContext.requestId, status: "charged", amount: 5_000, delivered: true })]);
  }, 60_000);

  it("limits signups per client IP per hour", async () => {
    const ip = `198.51.100.${Date.now() % 250}`;
    const statuses: number[] = [];
    for (let i = 0; i <= SIGNUP_LIMIT; i++) {
      const res = await signupHandler(event("/api/v1/signup", { email: `ip-${Date.now()}-${i}@billing.test` }, {}, ip), lambdaContext("signup", 256, 10));
      statuses.push(res.statusCode!);
      if (i === SIGNUP_LIMIT) {
        expect(JSON.parse(res.body!).error.code).toBe("RATE_LIMITED");
        expect(Number(res.headers!["Retry-After"])).toBeGreaterThan(0);
      }
    }
    expect(statuses).toEqual([201, 201, 201, 429]);
  });

  it("limits failed authentication per client IP: 401s, then 429 for the rest of the minute, a good key from that IP too; other IPs unaffected", async () => {
    // The windows are whole minutes: start well inside one.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 45_000) await new Promise((resolve) => setTimeout(resolve, 60_500 - intoMinute));
    const signup = await signupHandler(
      event("/api/v1/signup", { email: `auth-limit-${Date.now()}@billing.test` }, {}, "203.0.113.78"),
      lambdaContext("signup", 256, 10),
    );
    const { api_key: key } = JSON.parse(signup.body!) as { api_key: string };
    const ip = `198.51.100.${(Date.now() % 200) + 50}`;
    const render = (authorization: string, sourceIp: string) =>
      htmlHandler(
        event("/api/v1/html-to-screenshot", { html: "<p>x</p>", width: 320, height: 100 }, { authorization }, sourceIp),
        lambdaContext("html", 2048, 30),
      );
    const statuses: number[] = [];
    for (let i = 0; i <= AUTH_FAILURES; i++) statuses.push((await render("Bearer shl_live_wrong", ip)).statusCode!);
    expect(statuses).toEqual([...Array(AUTH_FAILURES).fill(401), 429]);
    // Another wrong key from the address: 429 until the window ends.
    const refused = await render("Bearer shl_live_wrong-again", ip);
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers!["Retry-After"])).toBeGreaterThan(0);
    // The valid key of someone behind the same address (an office, a carrier's NAT) is served.
    expect((await render(`Bearer ${key}`, ip)).statusCode).toBe(200);
    expect((await render(`Bearer ${key}`, "198.51.100.9")).statusCode).toBe(200);
  }, 60_000);
});
