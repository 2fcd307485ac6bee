import { afterEach, describe, expect, it, vi } from "vitest";
import { config } from "../../../lib/config.js";
import { AppError } from "../../../lib/errors.js";
import { type AccessRequest, authorize, endHolding, keepForRetries, settle, undo } from "../../../lib/http/access.js";
import { PRICES, RENDERS_IN_FLIGHT, routeById } from "../../../lib/routes.js";
import { account, fakeAccess, KEY } from "../../helpers/access.js";

// The access decision for each kind of route, with the ledger and the facilitator faked (they run
// for real against DynamoDB Local and anvil in test/integration). Defaults: 10 requests/s, 10 signups/h.

afterEach(() => vi.restoreAllMocks());

const request = (headers: Record<string, string> = {}, body: unknown = {}): AccessRequest => ({
  headers,
  body,
  requestId: "req-1",
  sourceIp: "203.0.113.9",
  at: new Date(0),
  resource: { url: "http://127.0.0.1/api/v1/screenshot", description: "test", mimeType: "image/png" },
  leaseUntil: 30_000,
  deadline: { at: 30_000, signal: new AbortController().signal },
  query: "",
});

const codeOf = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  return (error as AppError).code;
};

describe("a priced route (screenshot)", () => {
  const route = routeById("screenshot");

  it("without Authorization or payment: 402 with payment details, after the IP's limit, charging nothing", async () => {
    const { deps, calls } = fakeAccess();
    expect(await codeOf(authorize(route, request(), deps))).toBe("PAYMENT_REQUIRED");
    expect(calls).toEqual(["limit ip:203.0.113.9 10/1s", `verify ${PRICES.screenshot}`]);
  });

  it("quotes the mockup price for a mockup", async () => {
    const { deps, calls } = fakeAccess();
    await codeOf(authorize(route, request({}, { style: "mockup" }), deps));
    expect(calls).toContain(`verify ${PRICES.mockup}`);
  });

  it("with a valid x402 payment: the payer is known, limited, and settled only afterwards", async () => {
    const { deps, calls } = fakeAccess({ paymentHeader: "signed" });
    const grant = await authorize(route, request({ "payment-signature": "signed" }), deps);
    expect(grant.payer).toEqual({ kind: "x402", address: "0xPayer" });
    expect(grant.charge).toBeNull();
    expect(calls).toEqual(["limit ip:203.0.113.9 10/1s", `verify ${PRICES.screenshot}`, "limit payer:0xpayer 10/1s"]);
    expect(await settle(grant, request(), Date.now() + 10_000, deps)).toEqual({ "PAYMENT-RESPONSE": "receipt" });
    expect(calls.at(-1)).toBe(`settle ${PRICES.screenshot}`);
    await undo(grant, deps);
    expect(calls.at(-1), "a settled payment is not released").toBe(`settle ${PRICES.screenshot}`);
  });

  it("frees an unsettled payment when the work failed", async () => {
    const { deps, calls } = fakeAccess({ paymentHeader: "signed" });
    const grant = await authorize(route, request({ "payment-signature": "signed" }), deps);
    await undo(grant, deps);
    expect(calls.at(-1)).toBe(`release ${PRICES.screenshot}`);
  });

  describe("render cache", () => {
    const hit = { state: "hit", entry: { objectKey: "cache/d1/x", meta: {}, storedAt: 0, freshUntil: 1 } } as const;
    const cached = (headers: Record<string, string>) => request(headers, { url: "https://example.com", cacheTtl: 60 });

    it("a hit with a key is looked up before the charge and costs nothing; a miss is charged", async () => {
      const { deps, calls } = fakeAccess({ cache: hit });
      const grant = await authorize(route, cached({ authorization: `Bearer ${KEY}` }), deps);
      expect(grant.cache).toEqual(hit);
      expect(grant.charge).toBeNull();
      expect(calls).toContain("cache acct-1");
      expect(calls.some((c) => c.startsWith("charge"))).toBe(false);
      const miss = fakeAccess();
      expect((await authorize(route, cached({ authorization: `Bearer ${KEY}` }), miss.deps)).charge?.amount).toBe(PRICES.screenshot);
      expect(miss.calls.indexOf("cache acct-1")).toBeLessThan(miss.calls.findIndex((c) => c.startsWith("charge")));
    });

    it("with x402 the cache is the payer's, looked up after the payment verified: a hit still pays", async () => {
      const { deps, calls } = fakeAccess({ paymentHeader: "signed", cache: hit });
      const grant = await authorize(route, cached({ "payment-signature": "signed" }), deps);
      expect(grant.cache).toEqual(hit);
      expect(grant.payment?.amount).toBe(PRICES.screenshot);
      expect(calls.indexOf(`verify ${PRICES.screenshot}`)).toBeLessThan(calls.indexOf("cache 0xpayer"));
    });

    it("without cacheTtl there is no slot", async () => {
      const { deps, calls } = fakeAccess({ cache: hit });
      expect((await authorize(route, request({ authorization: `Bearer ${KEY}` }, { url: "https://example.com" }), deps)).cache).toBeNull();
      expect(calls.some((c) => c.startsWith("cache"))).toBe(false);
    });
  });

  describe("Idempotency-Key", () => {
    const keyed = (idempotencyKey: string, body: unknown = { url: "https://example.com" }) =>
      request({ authorization: `Bearer ${KEY}`, "idempotency-key": idempotencyKey }, body);

    it("the first request claims the key and is charged; its answer kept, a retry gets it back without a charge", async () => {
      const { deps, calls } = fakeAccess();
      const first = await authorize(route, keyed("k-1"), deps);
      expect(first.charge?.amount).toBe(PRICES.screenshot);
      expect(first.idempotency).toEqual({ scope: "acct-1", key: "k-1", requestId: "req-1" });
      await keepForRetries(first, { body: "the first answer" }, "req-1", deps);
      const retry = await authorize(route, keyed("k-1"), deps);
      expect(retry.replay).toBe("the first answer");
      expect(retry.charge).toBeNull();
      expect(calls.filter((c) => c.startsWith("charge"))).toHaveLength(1);
    });

    it("the same key with another body: 409 IDEMPOTENCY_CONFLICT; while the first runs: 409 IDEMPOTENCY_IN_PROGRESS; neither charged", async () => {
      const { deps, calls } = fakeAccess();
      await authorize(route, keyed("k-2"), deps);
      expect(await codeOf(authorize(route, keyed("k-2"), deps))).toBe("IDEMPOTENCY_IN_PROGRESS");
      expect(await codeOf(authorize(route, keyed("k-2", { url: "https://example.org" }), deps))).toBe("IDEMPOTENCY_CONFLICT");
      expect(calls.filter((c) => c.startsWith("charge"))).toHaveLength(1);
    });

    it("a request that failed releases its key (its charge refunded), so the retry runs afresh; so does a refused charge", async () => {
      const { deps, calls } = fakeAccess();
      const first = await authorize(route, keyed("k-3"), deps);
      await undo(first, deps);
      expect(calls).toContain("release-key k-3");
      expect((await authorize(route, keyed("k-3"), deps)).charge).not.toBeNull();
      const poor = fakeAccess({ account: account({ balance: 0 }) });
      expect(await codeOf(authorize(route, keyed("k-4"), poor.deps))).toBe("INSUFFICIENT_BALANCE");
      expect(poor.calls).toContain("release-key k-4");
    });

    describe("x402 payment-identifier", () => {
      // A v2 payment whose payload carries a payment-identifier id; the fake facilitator takes `signed` as valid.
      const paid = (id: string, nonce = "c") =>
        Buffer.from(
          JSON.stringify({
            x402Version: 2,
            payload: {
              signature: "0xabc",
              authorization: {
                from: `0x${"a".repeat(40)}`,
                to: `0x${"b".repeat(40)}`,
                value: "5000",
                validAfter: "0",
                validBefore: "1",
                nonce: `0x${nonce.repeat(64)}`,
              },
            },
            extensions: { "payment-identifier": { info: { required: false, id } } },
          }),
        ).toString("base64");
      const pay = (header: string) => request({ "payment-signature": header });

      it("is claimed before the payment is verified, so a resend of the settled payment gets the first answer without verifying", async () => {
        const header = paid("pay_0123456789abcdef");
        const { deps, calls } = fakeAccess({ paymentHeader: header });
        const first = await authorize(route, pay(header), deps);
        expect(first.idempotency).toEqual({ scope: "x402", key: "pay_0123456789abcdef", requestId: "req-1" });
        expect(calls.indexOf("claim pay_0123456789abcdef")).toBeLessThan(calls.indexOf(`verify ${PRICES.screenshot}`));
        await keepForRetries(first, { body: "the paid answer" }, "req-1", deps);
        const resend = await authorize(route, pay(header), deps);
        expect(resend.replay).toBe("the paid answer");
        expect(resend.payment).toBeNull();
        expect(calls.filter((c) => c.startsWith("verify"))).toHaveLength(1);
      });

      it("the same id with another payment: 409 IDEMPOTENCY_CONFLICT, nothing verified", async () => {
        const header = paid("pay_0123456789abcdef");
        const { deps, calls } = fakeAccess({ paymentHeader: header });
        await authorize(route, pay(header), deps);
        expect(await codeOf(authorize(route, pay(paid("pay_0123456789abcdef", "d")), deps))).toBe("IDEMPOTENCY_CONFLICT");
        expect(calls.filter((c) => c.startsWith("verify"))).toHaveLength(1);
      });

      it("a payment that does not verify frees its id; so does work that failed", async () => {
        const header = paid("pay_fedcba9876543210");
        const refused = fakeAccess({ paymentHeader: "another" });
        expect(await codeOf(authorize(route, pay(header), refused.deps))).toBe("PAYMENT_REQUIRED");
        expect(refused.calls).toContain("release-key pay_fedcba9876543210");
        const { deps, calls } = fakeAccess({ paymentHeader: header });
        await undo(await authorize(route, pay(header), deps), deps);
        expect(calls).toContain("release-key pay_fedcba9876543210");
        expect(calls.at(-1)).toBe(`release ${PRICES.screenshot}`);
      });
    });

    it("a key that is not 1 to 255 visible ASCII characters: 400 before anything is charged", async () => {
      const { deps, calls } = fakeAccess();
      for (const bad of ["", "has space", "x".repeat(256), "caf\u00e9"]) expect(await codeOf(authorize(route, keyed(bad), deps))).toBe("INVALID_PARAMS");
      expect(calls.some((c) => c.startsWith("charge") || c.startsWith("claim"))).toBe(false);
    });
  });

  it("with a wrong key: 401, the failure counted for the IP, before any other limit or charge", async () => {
    const { deps, calls } = fakeAccess();
    expect(await codeOf(authorize(route, request({ authorization: "Bearer nope" }), deps))).toBe("UNAUTHORIZED");
    expect(calls).toEqual(["authenticate", `limit auth-failures:203.0.113.9 ${config.AUTH_FAILURES_PER_MINUTE}/60s`]);
  });

  it("past the IP's failed-authentication limit: wrong keys are 429 for the rest of the window without counting more, a good key from that IP is still served", async () => {
    const ip = "198.51.100.7";
    const { deps, calls } = fakeAccess({ limited: [`auth-failures:${ip}`] });
    const from = (sourceIp: string, key: string) => authorize(route, { ...request({ authorization: `Bearer ${key}` }), sourceIp }, deps);
    expect(await codeOf(from(ip, "nope"))).toBe("RATE_LIMITED");
    calls.length = 0;
    expect(await codeOf(from(ip, "still nope"))).toBe("RATE_LIMITED");
    expect(calls, "looked up, not counted again").toEqual(["authenticate"]);
    expect((await from(ip, KEY)).charge).not.toBeNull();
    expect((await from("198.51.100.8", KEY)).charge).not.toBeNull();
  });

  it("with a key over its rate: 429 and no charge", async () => {
    const { deps, calls } = fakeAccess({ limited: ["acct:acct-1"] });
    expect(await codeOf(authorize(route, request({ authorization: `Bearer ${KEY}` }), deps))).toBe("RATE_LIMITED");
    expect(calls.some((c) => c.startsWith("charge"))).toBe(false);
  });

  it("with a key: limited at the account's own rate, then charged the price", async () => {
    const { deps, calls } = fakeAccess({ account: account({ rateLimitPerSecond: 3 }) });
    const grant = await authorize(route, request({ authorization: `Bearer ${KEY}` }, { style: "mockup" }), deps);
    expect(grant.payer).toMatchObject({ kind: "account", account: { accountId: "acct-1" } });
    expect(grant.charge?.amount).toBe(PRICES.mockup);
    expect(calls).toEqual(["authenticate", "limit acct:acct-1 3/1s", `charge acct-1 ${PRICES.mockup}`]);
  });

  it("with a key whose balance is too low: 402 INSUFFICIENT_BALANCE", async () => {
    const { deps } = fakeAccess({ account: account({ balance: PRICES.screenshot - 1 }) });
    expect(await codeOf(authorize(route, request({ authorization: `Bearer ${KEY}` }), deps))).toBe("INSUFFICIENT_BALANCE");
  });

  it("marks the charge delivered once the response is produced; a failure to mark it only logs (the reconciler then refunds)", async () => {
    const { deps, calls } = fakeAccess();
    const grant = await authorize(route, request({ authorization: `Bearer ${KEY}` }), deps);
    expect(await settle(grant, request(), Date.now() + 10_000, deps)).toEqual({});
    expect(calls.at(-1)).toBe(`deliver ${PRICES.screenshot}`);
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    await expect(settle(grant, request(), Date.now() + 10_000, { ...deps, deliver: () => Promise.reject(new Error("DynamoDB down")) })).resolves.toEqual({});
    expect(String(logged.mock.calls[0]?.[0])).toMatch(/marking a charge delivered failed/);
    logged.mockRestore();
  });

  it("refunds the charge when the work failed, and only logs a refund that fails", async () => {
    const { deps, calls } = fakeAccess();
    const grant = await authorize(route, request({ authorization: `Bearer ${KEY}` }), deps);
    await undo(grant, deps);
    expect(calls.at(-1)).toBe(`refund ${PRICES.screenshot}`);
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    await expect(undo(grant, { ...deps, refund: () => Promise.reject(new Error("DynamoDB down")) })).resolves.toBeUndefined();
    expect(String(logged.mock.calls[0]?.[0])).toMatch(/refunding a charge failed/);
  });

  it("does not hold the answer for a ledger that stopped answering: a refund that hangs is let go after 1.5 s", async () => {
    const { deps } = fakeAccess();
    const grant = await authorize(route, request({ authorization: `Bearer ${KEY}` }), deps);
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const started = Date.now();
    await undo(grant, { ...deps, refund: () => new Promise(() => undefined) });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(String(logged.mock.calls[0]?.[0])).toMatch(/refunding a charge failed/);
  });
});

describe("renders in flight, per caller, across routes", () => {
  const keyed = (requestId: string) => ({ ...request({ authorization: `Bearer ${KEY}` }), requestId });
  const paid = (requestId: string) => ({ ...request({ "payment-signature": "signed" }), requestId });

  it(`an account holds at most ${RENDERS_IN_FLIGHT} renders at once whatever route they come through: the next is 429 before any charge; one ended frees its slot`, async () => {
    const { deps, calls, slots } = fakeAccess();
    const routes = ["screenshot", "content", "animate", "html-to-screenshot"] as const;
    const grants = await Promise.all(Array.from({ length: RENDERS_IN_FLIGHT }, (_, i) => authorize(routeById(routes[i % 4]!), keyed(`req-${i}`), deps)));
    expect(slots.get("render:acct:acct-1")).toEqual(grants.map((_, i) => `req-${i}`));
    const charges = calls.filter((c) => c.startsWith("charge")).length;
    const refused = await authorize(routeById("content"), keyed("req-over"), deps).catch((error: unknown) => error as AppError);
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ code: "RATE_LIMITED", status: 429, headers: { "Retry-After": "1" } });
    expect(calls.filter((c) => c.startsWith("charge")).length, "nothing charged for the refused one").toBe(charges);
    // A free route (metadata) holds none; another account is not held back.
    expect((await authorize(routeById("metadata"), keyed("req-free"), deps)).slot ?? null).toBeNull();
    // The first render answered (or failed): its slot is the next render's.
    await endHolding(grants[0]!, deps);
    expect((await authorize(routeById("screenshot"), keyed("req-next"), deps)).slot).toMatchObject({
      pool: "render:acct:acct-1",
      index: 0,
      holder: "req-next",
    });
  });

  it("a cache hit renders nothing and holds no slot; a signed link's renders count apart from the account's own", async () => {
    const hit = { state: "hit", entry: { objectKey: "cache/d1/x", meta: {}, storedAt: 0, freshUntil: 1 } } as const;
    const { deps, slots } = fakeAccess({ cache: hit });
    for (let i = 0; i < RENDERS_IN_FLIGHT; i++) await authorize(routeById("screenshot"), keyed(`req-${i}`), deps);
    const cached = await authorize(routeById("screenshot"), { ...keyed("req-hit"), body: { url: "https://example.com", cacheTtl: 60 } }, deps);
    expect(cached.cache?.state).toBe("hit");
    expect(cached.slot ?? null).toBeNull();
    // The owner's own slots are all held: a link's viewer is counted in the links' pool, and the owner's next is still refused.
    const link = await authorize(routeById("signed-screenshot"), { ...request(), requestId: "req-link", query: "signature=good" }, deps);
    expect(link.slot).toMatchObject({ pool: "render:links:acct:acct-1" });
    expect(slots.get("render:acct:acct-1")).toHaveLength(RENDERS_IN_FLIGHT);
  });

  it("a charge refused lets the slot go at once; so does a refused x402 payer, whose payment is released for another try", async () => {
    const { deps, slots } = fakeAccess({ account: account({ balance: 0 }) });
    expect(await codeOf(authorize(routeById("screenshot"), keyed("req-poor"), deps))).toBe("INSUFFICIENT_BALANCE");
    expect(slots.get("render:acct:acct-1")?.filter(Boolean)).toEqual([]);
    const x402 = fakeAccess({ paymentHeader: "signed" });
    for (let i = 0; i < RENDERS_IN_FLIGHT; i++) await authorize(routeById("screenshot"), paid(`pay-${i}`), x402.deps);
    expect(await codeOf(authorize(routeById("screenshot"), paid("pay-over"), x402.deps))).toBe("RATE_LIMITED");
    expect(x402.calls.at(-1)).toBe(`release ${PRICES.screenshot}`);
    expect(x402.slots.get("render:payer:0xpayer")).toHaveLength(RENDERS_IN_FLIGHT);
  });
});

describe("a key route (usage)", () => {
  const route = routeById("usage");

  it("without Authorization: 401, never 402", async () => {
    const { deps, calls } = fakeAccess();
    expect(await codeOf(authorize(route, request(), deps))).toBe("UNAUTHORIZED");
    expect(calls).toEqual([]);
  });

  it("with a key: the account, limited, never charged", async () => {
    const { deps, calls } = fakeAccess();
    const grant = await authorize(route, request({ authorization: `Bearer ${KEY}` }), deps);
    expect(grant.account?.accountId).toBe("acct-1");
    expect(calls).toEqual(["authenticate", "limit acct:acct-1 10/1s"]);
  });
});

describe("a public route", () => {
  it("metadata: anyone, limited per client IP; a key sent is honoured and limited per account", async () => {
    const route = routeById("metadata");
    const anonymous = fakeAccess();
    expect((await authorize(route, request(), anonymous.deps)).account).toBeNull();
    expect(anonymous.calls).toEqual(["limit ip:203.0.113.9 10/1s"]);
    const keyed = fakeAccess();
    expect((await authorize(route, request({ authorization: `Bearer ${KEY}` }), keyed.deps)).account?.accountId).toBe("acct-1");
    expect(keyed.calls).toEqual(["authenticate", "limit acct:acct-1 10/1s"]);
  });

  it("signup: also the hourly limit of account creations per IP, before the per-second one", async () => {
    const route = routeById("signup");
    const { deps, calls } = fakeAccess({ limited: ["signup-ip:203.0.113.9"] });
    expect(await codeOf(authorize(route, request(), deps))).toBe("RATE_LIMITED");
    expect(calls).toEqual(["limit signup-ip:203.0.113.9 10/3600s"]);
  });

  it("an IPv6 client counts by its /64, whichever of its addresses it sends from", async () => {
    const route = routeById("signup");
    for (const sourceIp of ["2001:db8:7:8::1", "2001:db8:7:8:a:b:c:d"]) {
      const { deps, calls } = fakeAccess({ limited: ["signup-ip:2001:db8:7:8::/64"] });
      expect(await codeOf(authorize(route, { ...request(), sourceIp }, deps)), sourceIp).toBe("RATE_LIMITED");
      expect(calls).toEqual(["limit signup-ip:2001:db8:7:8::/64 10/3600s"]);
    }
  });
});

describe("an open route (health)", () => {
  it("checks nothing and touches nothing", async () => {
    const { deps, calls } = fakeAccess();
    expect(await authorize(routeById("health"), request({ authorization: "Bearer nope" }), deps)).toMatchObject({ account: null, payer: null, charge: null });
    expect(calls).toEqual([]);
  });
});
