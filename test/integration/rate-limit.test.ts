// The shared rate limiter with leases (lib/billing/rate-limit.ts) against the local stack's DynamoDB
// Local: instances are separate SharedRateLimiter objects over the same table, and windows are
// chosen through the `now` each call passes (so no test waits for the clock).

import { beforeAll, describe, expect, it } from "vitest";
import type { SharedRateLimiter as Limiter } from "../../lib/billing/rate-limit.js";
import { useSharedStackInProcess } from "../helpers/in-process.js";

let SharedRateLimiter: typeof Limiter;
let sharedCount: (subject: string, windowStart: number) => Promise<number>;

beforeAll(async () => {
  useSharedStackInProcess();
  ({ SharedRateLimiter } = await import("../../lib/billing/rate-limit.js"));
  const { documents } = await import("../../lib/billing/dynamodb.js");
  const { rateWindowKey } = await import("../../lib/billing/keys.js");
  const { GetCommand } = await import("@aws-sdk/lib-dynamodb");
  const { config } = await import("../../lib/config.js");
  sharedCount = async (subject, windowStart) => {
    const { Item } = await documents.send(new GetCommand({ TableName: config.TABLE_NAME, Key: rateWindowKey(subject, windowStart), ConsistentRead: true }));
    return Number(Item?.count ?? 0);
  };
});

// A window far from the real clock, a fresh subject per test.
const second = 2_000_000_000;
const at = (window: number, ms = 0) => (second + window) * 1000 + ms;
const subject = () => `test-${crypto.randomUUID()}`;

/** Runs `enforce` and says whether it let the request through (429 -> false). */
const passes = (limiter: Limiter, name: string, limit: number, now: number) =>
  limiter.enforce(name, limit, 1, now).then(
    () => true,
    (error: { code?: string }) => {
      if (error.code !== "RATE_LIMITED") throw error;
      return false;
    },
  );

describe("the shared rate limiter", () => {
  it("counts a quiet subject one write per request, and refuses past the limit without writing more", async () => {
    const limiter = new SharedRateLimiter();
    const name = subject();
    const results: boolean[] = [];
    for (let i = 0; i < 12; i++) results.push(await passes(limiter, name, 10, at(0, i)));
    expect(results).toEqual([...Array(10).fill(true), false, false]);
    expect(await sharedCount(name, second)).toBe(10);
  });

  it("makes requests arriving together wait for one lease instead of each taking its own", async () => {
    const limiter = new SharedRateLimiter();
    const name = subject();
    for (let i = 0; i < 150; i++) await passes(limiter, name, 1000, at(0, i));
    // 200 at once in the next window: leases of 100 (a tenth of the limit), two of them.
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => passes(limiter, name, 1000, at(1, i))));
    expect(results.every(Boolean)).toBe(true);
    expect(await sharedCount(name, second + 1)).toBe(200);
  });

  it("lets an instance that was busy last window take a lease, serving from it without writing", async () => {
    const limiter = new SharedRateLimiter();
    const name = subject();
    for (let i = 0; i < 60; i++) expect(await passes(limiter, name, 1000, at(0, i))).toBe(true);
    expect(await sharedCount(name, second)).toBe(60);
    // Next window: it used 60 before, so it takes 60 (under a tenth of 1,000) with its first request...
    const first = await limiter.enforce(name, 1000, 1, at(1));
    expect(await sharedCount(name, second + 1)).toBe(60);
    expect(first.remaining).toBe(999);
    // ...and the next 59 are served from the lease: the shared count does not move.
    for (let i = 1; i < 60; i++) await limiter.enforce(name, 1000, 1, at(1, i));
    expect(await sharedCount(name, second + 1)).toBe(60);
    // The 61st takes another lease.
    await limiter.enforce(name, 1000, 1, at(1, 60));
    expect(await sharedCount(name, second + 1)).toBe(120);
  });

  it("never lets more than the limit through across instances, and strands at most a lease's worth", async () => {
    const [busy, other] = [new SharedRateLimiter(), new SharedRateLimiter()];
    const name = subject();
    const limit = 100;
    // `busy` used 30 last window: it now leases 10 at a time; `other` was quiet: one at a time.
    for (let i = 0; i < 30; i++) await passes(busy, name, limit, at(0, i));
    let served = 0;
    for (let i = 0; i < 75; i++) {
      if (await passes(busy, name, limit, at(1, i))) served++;
      if (await passes(other, name, limit, at(1, i))) served++;
    }
    expect(served).toBeLessThanOrEqual(limit);
    expect(served).toBeGreaterThanOrEqual(limit - 9);
  });

  it("grants only the part of a lease still under the limit, and refuses once none is", async () => {
    const limiter = new SharedRateLimiter();
    const name = subject();
    for (let i = 0; i < 100; i++) await passes(limiter, name, 100, at(0, i));
    // Another instance used 95 of this window's 100 first.
    const other = new SharedRateLimiter();
    for (let i = 0; i < 95; i++) await passes(other, name, 100, at(1, i));
    const results: boolean[] = [];
    for (let i = 0; i < 7; i++) results.push(await passes(limiter, name, 100, at(1, 100 + i)));
    expect(results).toEqual([true, true, true, true, true, false, false]);
  });
});
