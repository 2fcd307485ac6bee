// Idempotency-Key on priced requests with an API key, through the stack and DynamoDB Local / s3rver:
// a retry gets the first answer without a second charge (large answers kept in S3), another body
// is 409, a retry while the first runs is 409, a failed request frees its key, keys are per account.
import { describe, expect, inject, it } from "vitest";
import { type ErrorBody, postJson } from "../helpers/api.js";

const base = () => inject("baseUrl");
const fixture = (path: string) => `${inject("fixtureUrl")}${path}`;
let counter = 0;

async function freshAccount() {
  const res = await postJson("/api/v1/signup", { email: `idem-${Date.now()}-${counter++}@idem.test` }, {});
  const { api_key: key } = (await res.json()) as { api_key: string };
  const usage = async () =>
    (await (await fetch(`${base()}/api/v1/usage`, { headers: { authorization: `Bearer ${key}` } })).json()) as {
      balance_micro_usd: number;
      recent_usage: { kind: string; status: string }[];
    };
  return {
    key,
    usage,
    send: (path: string, body: unknown, idempotencyKey: string) => postJson(path, body, { authorization: `Bearer ${key}`, "idempotency-key": idempotencyKey }),
  };
}
const charges = (report: { recent_usage: { kind: string; status: string }[] }) =>
  report.recent_usage.filter((e) => e.kind === "charge" && e.status === "charged").length;

describe("Idempotency-Key", () => {
  it("a retry with the same key and body gets the first answer, byte for byte, and is not charged again", async () => {
    const account = await freshAccount();
    const before = (await account.usage()).balance_micro_usd;
    const body = { html: "<h1>once</h1>", width: 320, height: 100, deviceScaleFactor: 1 };
    const first = await account.send("/api/v1/html-to-screenshot", body, "retry-1");
    expect(first.status).toBe(200);
    const firstBytes = Buffer.from(await first.arrayBuffer());
    const retry = await account.send("/api/v1/html-to-screenshot", body, "retry-1");
    expect(retry.status).toBe(200);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.headers.get("x-charged-micro-usd")).toBe("0");
    expect(Buffer.from(await retry.arrayBuffer()).equals(firstBytes)).toBe(true);
    expect(retry.headers.get("x-request-id")).not.toBe(first.headers.get("x-request-id"));
    const after = await account.usage();
    expect(after.balance_micro_usd).toBe(before - 5000);
    expect(charges(after)).toBe(1);
  });

  it("an answer too large for its record (a 1280x800 page at 2x as JSON) is kept in S3 and comes back whole", async () => {
    const account = await freshAccount();
    const body = { url: fixture("/showcase"), responseFormat: "json" };
    const first = (await (await account.send("/api/v1/screenshot", body, "large-1")).json()) as { image: string; renderMs: number };
    expect(first.image.length).toBeGreaterThan(300_000);
    const retry = await account.send("/api/v1/screenshot", body, "large-1");
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(await retry.json()).toEqual(first);
    expect(charges(await account.usage())).toBe(1);
  });

  it("another body with the same key: 409 IDEMPOTENCY_CONFLICT, not charged", async () => {
    const account = await freshAccount();
    await account.send("/api/v1/html-to-screenshot", { html: "<p>a</p>" }, "conflict-1");
    const other = await account.send("/api/v1/html-to-screenshot", { html: "<p>b</p>" }, "conflict-1");
    expect(other.status).toBe(409);
    expect(((await other.json()) as ErrorBody).error.code).toBe("IDEMPOTENCY_CONFLICT");
    expect(charges(await account.usage())).toBe(1);
  });

  it("a retry while the first still runs: 409 IDEMPOTENCY_IN_PROGRESS with Retry-After; once it is done, its answer", async () => {
    const account = await freshAccount();
    const body = { html: "<p>slow</p>", delay: 2000, width: 320, height: 100, deviceScaleFactor: 1 };
    const first = account.send("/api/v1/html-to-screenshot", body, "running-1");
    await new Promise((resolve) => setTimeout(resolve, 700));
    const during = await account.send("/api/v1/html-to-screenshot", body, "running-1");
    expect(during.status).toBe(409);
    expect(during.headers.get("retry-after")).toBe("1");
    expect(((await during.json()) as ErrorBody).error.code).toBe("IDEMPOTENCY_IN_PROGRESS");
    expect((await first).status).toBe(200);
    const after = await account.send("/api/v1/html-to-screenshot", body, "running-1");
    expect(after.headers.get("idempotent-replayed")).toBe("true");
    expect(charges(await account.usage())).toBe(1);
  });

  it("a request that failed frees its key: the retry runs again (and is refunded again); keys are per account", async () => {
    const account = await freshAccount();
    const broken = { url: fixture("/not-found") };
    expect((await account.send("/api/v1/screenshot", broken, "failed-1")).status).toBe(422);
    const retry = await account.send("/api/v1/screenshot", broken, "failed-1");
    expect(retry.status).toBe(422);
    expect(retry.headers.get("idempotent-replayed")).toBeNull();
    expect(charges(await account.usage())).toBe(0);
    const other = await freshAccount();
    const body = { html: "<p>mine</p>" };
    expect((await account.send("/api/v1/html-to-screenshot", body, "shared-key")).status).toBe(200);
    const theirs = await other.send("/api/v1/html-to-screenshot", body, "shared-key");
    expect(theirs.headers.get("idempotent-replayed")).toBeNull();
    expect(charges(await other.usage())).toBe(1);
  });

  it("a malformed key: 400 naming the header, nothing charged", async () => {
    const account = await freshAccount();
    const res = await account.send("/api/v1/html-to-screenshot", { html: "<p>x</p>" }, "x".repeat(300));
    expect(res.status).toBe(400);
    expect(((await res.json()) as ErrorBody).error.message).toMatch(/Idempotency-Key: must be 1 to 255 visible ASCII characters/);
    expect(charges(await account.usage())).toBe(0);
  });
});
