import { afterEach, describe, expect, it, vi } from "vitest";
import { buildApiGatewayEvent, lambdaContext } from "../../../dev/events.js";
import { handler as fallback } from "../../../functions/fallback.js";
import { handler as health } from "../../../functions/health.js";
import { handler as screenshot } from "../../../functions/screenshot.js";
import { metadataRequest } from "../../../lib/api/schemas.js";
import { rateLimited } from "../../../lib/billing/errors.js";
import { AppError } from "../../../lib/errors.js";
import { binary, json } from "../../../lib/http/responses.js";
import { withHttp } from "../../../lib/http/with-http.js";
import { fakeAccess, KEY } from "../../helpers/access.js";
import { invoke } from "../../helpers/invoke.js";

afterEach(() => vi.restoreAllMocks());

// These tests exercise the pipeline itself: "open" routes, or access control with fakes in place of
// DynamoDB (test/unit/http/access.test.ts decides access; test/integration runs it for real).

describe("withHttp", () => {
  it("answers with the handler's JSON and the gateway's request id in X-Request-Id", async () => {
    const res = await invoke(health, { method: "GET", path: "/api/v1/health" });
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({ status: "ok", version: expect.any(String) });
    expect(res.headers["X-Request-Id"]).toBe(res.event.requestContext.requestId);
    expect(res.headers["Content-Type"]).toMatch(/^application\/json/);
  });

  it("validates before the handler runs, and the handler gets the parsed body with defaults", async () => {
    const seen = vi.fn();
    const handler = withHttp({ route: "health", schema: metadataRequest }, async (request) => {
      seen(request.body);
      return json({ ok: true });
    });
    const bad = await invoke(handler, { method: "POST", path: "/api/v1/metadata", body: '{"url":"nope"}' });
    expect(bad.status).toBe(400);
    expect(bad.json()).toEqual({ error: { code: "INVALID_PARAMS", message: expect.stringMatching(/^Invalid request: url: /) } });
    expect(bad.headers["X-Request-Id"]).toBe(bad.event.requestContext.requestId);
    expect(seen).not.toHaveBeenCalled();

    const good = await invoke(handler, { method: "POST", path: "/api/v1/metadata", body: '{"url":"https://example.com"}' });
    expect(good.status).toBe(200);
    expect(seen).toHaveBeenCalledWith({ url: "https://example.com" });
  });

  it("decodes a base64-encoded JSON body, as API Gateway sends a body it takes for binary", async () => {
    const handler = withHttp({ route: "health", schema: metadataRequest }, async (request) => json(request.body));
    const event = buildApiGatewayEvent(
      { method: "POST", url: "/api/v1/metadata", headers: { "content-type": "application/json" }, body: Buffer.alloc(0), sourceIp: "127.0.0.1" },
      "test",
    );
    Object.assign(event, { isBase64Encoded: true, body: Buffer.from('{"url":"https://example.com/b64"}').toString("base64") });
    const result = await handler(event, lambdaContext("test", 256, 10));
    expect(JSON.parse(result.body!)).toEqual({ url: "https://example.com/b64" });
  });

  it.each([
    ["text/plain", "text/plain;charset=UTF-8"],
    ["a form", "application/x-www-form-urlencoded"],
    ["a multipart form", "multipart/form-data; boundary=x"],
    ["bytes", "application/octet-stream"],
    ["a JSON look-alike", "application/jsonp"],
    ["no type at all", ""],
  ])("answers 415 UNSUPPORTED_MEDIA_TYPE for a JSON body sent as %s, and never reads it", async (_name, type) => {
    const seen = vi.fn();
    const handler = withHttp({ route: "health", schema: metadataRequest }, async (request) => {
      seen(request.body);
      return json({});
    });
    const res = await invoke(handler, { method: "POST", path: "/api/v1/metadata", headers: { "content-type": type }, body: '{"url":"https://example.com"}' });
    expect(res.status).toBe(415);
    expect(res.json().error.code).toBe("UNSUPPORTED_MEDIA_TYPE");
    expect(seen).not.toHaveBeenCalled();
  });

  it("takes application/json with a charset, in any case", async () => {
    const handler = withHttp({ route: "health", schema: metadataRequest }, async (request) => json(request.body));
    for (const type of ["application/json; charset=utf-8", "Application/JSON;charset=UTF-8"]) {
      const res = await invoke(handler, { method: "POST", path: "/api/v1/metadata", headers: { "content-type": type }, body: '{"url":"https://example.com"}' });
      expect(res.status, type).toBe(200);
    }
  });

  it.each([
    ["an empty body", ""],
    ["a body that is not JSON", "{url:"],
    ["a JSON array", "[1]"],
    ["JSON null", "null"],
    ["a JSON string", '"https://example.com"'],
  ])("answers 400 INVALID_PARAMS for %s", async (_name, body) => {
    const res = await invoke(screenshot, { method: "POST", path: "/api/v1/screenshot", body });
    expect(res.status).toBe(400);
    expect(res.json().error.code).toBe("INVALID_PARAMS");
  });

  it("turns an AppError into its status, code, message and headers", async () => {
    const handler = withHttp({ route: "health" }, async () => {
      throw new AppError("RATE_LIMITED", "Slow down.", { headers: { "Retry-After": "1" } });
    });
    const res = await invoke(handler, { method: "GET", path: "/x" });
    expect(res.status).toBe(429);
    expect(res.headers["Retry-After"]).toBe("1");
    expect(res.headers["X-Request-Id"]).toBeTruthy();
    expect(res.json()).toEqual({ error: { code: "RATE_LIMITED", message: "Slow down." } });
  });

  it("answers an unknown error with a generic 500 that leaks nothing, and logs it with the request id", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const handler = withHttp({ route: "health" }, async () => {
      throw new Error("connect ECONNREFUSED 10.0.0.7:5432 password=hunter2");
    });
    const res = await invoke(handler, { method: "GET", path: "/x" });
    expect(res.status).toBe(500);
    const body = res.json();
    expect(body.error.code).toBe("INTERNAL_ERROR");
    expect(JSON.stringify(body)).not.toMatch(/hunter2|ECONNREFUSED|at /);
    expect(body.error.message).toContain(res.event.requestContext.requestId);
    const line = logged.mock.calls.map((c) => String(c[0])).find((l) => l.includes("hunter2"));
    expect(line).toBeDefined();
    expect(JSON.parse(line!)).toMatchObject({ level: "error", requestId: res.event.requestContext.requestId });
  });

  it("answers a route's own timeout code at the deadline, before the Lambda's own timeout kills the request", async () => {
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    let seen: AbortSignal | undefined;
    const hang = (request: { deadline: { signal: AbortSignal } }) => {
      seen = request.deadline.signal;
      return new Promise<never>(() => undefined);
    };
    const light = withHttp({ route: "health" }, hang);
    const started = Date.now();
    // 3 s of Lambda time less the 2 s kept for answering: the work has 1 s.
    const res = await invoke(light, { method: "GET", path: "/x", timeoutSeconds: 3 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(Date.now() - started).toBeLessThan(2500);
    expect(res.status).toBe(504);
    expect(res.json().error.code).toBe("TIMEOUT");
    expect(seen?.aborted, "the handler's signal fired").toBe(true);
    expect(((seen as AbortSignal).reason as AppError).code).toBe("TIMEOUT");

    // A render route answers RENDER_TIMEOUT and refunds the charge (access faked: this is about the deadline).
    const ledger = fakeAccess();
    const render = withHttp({ route: "html-to-screenshot", access: ledger.deps }, hang);
    const rendered = await invoke(render, {
      method: "POST",
      path: "/x",
      body: '{"html":"<p>x</p>"}',
      headers: { authorization: `Bearer ${KEY}` },
      timeoutSeconds: 2.5,
    });
    expect(rendered.status).toBe(504);
    expect(rendered.json().error.code).toBe("RENDER_TIMEOUT");
    expect(ledger.calls.slice(-2)).toEqual(["charge acct-1 5000", "refund 5000"]);
  });

  it("answers with the work's output when the ledger's writes after it run past the last answer, and never refunds it", async () => {
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    // The delivery mark and the Idempotency-Key's answer hang (1.5 s each at most): past the last
    // answer (2.5 s of Lambda time less 0.5 s). The delivery may still land, so a 504 would take
    // money for nothing.
    const ledger = fakeAccess();
    const never = () => new Promise<never>(() => undefined);
    const deps = { ...ledger.deps, deliver: never, completeIdempotency: never };
    const render = withHttp({ route: "html-to-screenshot", access: deps }, async () => json({ rendered: true }));
    const res = await invoke(render, {
      method: "POST",
      path: "/x",
      body: '{"html":"<p>x</p>"}',
      headers: { authorization: `Bearer ${KEY}`, "idempotency-key": "late-answer" },
      timeoutSeconds: 2.5,
    });
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({ rendered: true });
    expect(ledger.calls).toContain("charge acct-1 5000");
    expect(ledger.calls.filter((call) => call.startsWith("refund"))).toEqual([]);
  });

  it("counts API Gateway's 30 s from the request's arrival, whatever the Lambda has left (a cold start eats into it)", async () => {
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    const handler = withHttp({ route: "health" }, (request) => {
      // Arrived 27.5 s ago: 30 s - 27.5 s - 2 s to answer leaves 0.5 s, though the Lambda has 10 s.
      expect(request.deadline.at - Date.now()).toBeLessThan(600);
      return new Promise<never>(() => undefined);
    });
    const started = Date.now();
    const res = await invoke(handler, { method: "GET", path: "/x", timeoutSeconds: 10, arrivedAt: Date.now() - 27_500 });
    expect(Date.now() - started).toBeLessThan(1500);
    expect(res.json().error.code).toBe("TIMEOUT");
  });

  it("serializes binary output base64-encoded with its content type", async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47]);
    const handler = withHttp({ route: "health" }, async () => binary(png, "image/png"));
    const res = await invoke(handler, { method: "GET", path: "/x" });
    expect(res.result.isBase64Encoded).toBe(true);
    expect(Buffer.from(res.result.body!, "base64")).toEqual(png);
    expect(res.headers["Content-Type"]).toBe("image/png");
  });

  it("gives each request its own id", async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 20; i++) ids.add(String((await invoke(health, { method: "GET", path: "/api/v1/health" })).headers["X-Request-Id"]));
    expect(ids.size).toBe(20);
  });
});

describe("limits counted while the work runs (metadata)", () => {
  /** Access faked, the rate limiter answering only when `answer` is called: 429 when `limited`. */
  function slowLimiter() {
    const ledger = fakeAccess();
    let answer!: (limited: boolean) => void;
    const asked = new Promise<void>((resolve) => {
      ledger.deps.enforceRateLimit = (_subject, limit, windowSeconds) => {
        resolve();
        return new Promise((ok, refuse) => {
          answer = (limited) => (limited ? refuse(rateLimited(limit, windowSeconds, 1)) : ok({ remaining: limit - 1, resetSeconds: 1 }));
        });
      };
    });
    return { deps: ledger.deps, asked, answer: (limited: boolean) => answer(limited) };
  }
  const metadataEvent = { method: "POST", path: "/api/v1/metadata", body: '{"url":"https://example.com"}' };

  it("the work starts before the limiter answers, and its answer waits for the count (RateLimit headers included)", async () => {
    const limiter = slowLimiter();
    const handler = withHttp({ route: "metadata", schema: metadataRequest, access: limiter.deps }, async () => {
      await limiter.asked;
      setTimeout(() => limiter.answer(false), 50);
      return json({ title: "x" });
    });
    const res = await invoke(handler, metadataEvent);
    expect(res.status).toBe(200);
    expect(res.headers.RateLimit).toBe('"caller";r=9;t=1');
  });

  it("over the limit the running work is aborted and the answer is 429", async () => {
    const limiter = slowLimiter();
    let reason: unknown;
    const handler = withHttp({ route: "metadata", schema: metadataRequest, access: limiter.deps }, async ({ deadline }) => {
      await limiter.asked;
      limiter.answer(true);
      await new Promise((resolve) => deadline.signal.addEventListener("abort", resolve));
      reason = deadline.signal.reason;
      return json({ title: "never sent" });
    });
    const res = await invoke(handler, metadataEvent);
    expect(res.status).toBe(429);
    expect(res.json().error.code).toBe("RATE_LIMITED");
    expect(res.headers["Retry-After"]).toBe("1");
    expect(res.headers.RateLimit).toBe('"caller";r=0;t=1');
    expect((reason as AppError).code).toBe("RATE_LIMITED");
  });

  it("over the limit the answer is 429 even when the work finished first, or failed", async () => {
    for (const outcome of ["done", "failed"]) {
      const limiter = slowLimiter();
      const handler = withHttp({ route: "metadata", schema: metadataRequest, access: limiter.deps }, async () => {
        await limiter.asked;
        setTimeout(() => limiter.answer(true), 50);
        if (outcome === "failed") throw new AppError("INVALID_URL", "The page could not be loaded.");
        return json({ title: "x" });
      });
      const res = await invoke(handler, metadataEvent);
      expect([outcome, res.status]).toEqual([outcome, 429]);
    }
  });

  it("a route that does not count while working (signup) never starts its work over the limit", async () => {
    const limiter = slowLimiter();
    const work = vi.fn(async () => json({}));
    const pending = invoke(withHttp({ route: "signup", access: limiter.deps }, work), { method: "POST", path: "/api/v1/signup", body: "{}" });
    await limiter.asked;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(work).not.toHaveBeenCalled();
    limiter.answer(true);
    expect((await pending).status).toBe(429);
    expect(work).not.toHaveBeenCalled();
  });
});

describe("fallback ($default route)", () => {
  it("answers 404 NOT_FOUND for an unknown path", async () => {
    const res = await invoke(fallback, { method: "GET", path: "/api/v1/nope" });
    expect(res.status).toBe(404);
    expect(res.json().error).toEqual({ code: "NOT_FOUND", message: expect.stringContaining("/api/v1/nope") });
  });

  it("answers 405 METHOD_NOT_ALLOWED with Allow for a known path and the wrong method", async () => {
    const res = await invoke(fallback, { method: "PUT", path: "/api/v1/screenshot" });
    expect(res.status).toBe(405);
    expect(res.headers.Allow).toBe("POST, GET");
    expect(res.json().error.code).toBe("METHOD_NOT_ALLOWED");
  });
});
