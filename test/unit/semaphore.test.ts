import { describe, expect, it } from "vitest";
import { fairSemaphore } from "../../lib/semaphore.js";

// The local stack's page pool (lib/render/browser.ts): shared between tenants, never held whole by one.
describe("a fair semaphore", () => {
  const signal = () => new AbortController().signal;
  /** Acquires for `tenant`, noting in `order` when it got its slot; resolves to the release. */
  const take = (acquire: ReturnType<typeof fairSemaphore>, tenant: string, order: string[], abort = signal()) =>
    acquire(tenant, abort).then((release) => {
      order.push(tenant);
      return release;
    });

  it("one tenant holds at most its share; another starts at once beside it, whatever the first has queued", async () => {
    const acquire = fairSemaphore(4, 3);
    const order: string[] = [];
    const first = await Promise.all([take(acquire, "a", order), take(acquire, "a", order), take(acquire, "a", order)]);
    // Twenty more of a's wait; b is served at once, though it came after them.
    const queued = Array.from({ length: 20 }, () => take(acquire, "a", order));
    await take(acquire, "b", order);
    expect(order).toEqual(["a", "a", "a", "b"]);
    // A slot freed goes to the waiting tenant whose turn it is: a (b was served last), one at a time.
    first[0]!();
    await queued[0];
    expect(order).toHaveLength(5);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(order).toHaveLength(5);
  });

  it("waiting tenants are served in turn, not in the order their requests queued", async () => {
    const acquire = fairSemaphore(1, 1);
    const order: string[] = [];
    const held = await take(acquire, "x", order);
    // Each lets its slot go as soon as it has it: the next in turn takes it.
    const served = (tenant: string) => take(acquire, tenant, order).then((release) => release());
    const waits = [served("a"), served("a"), served("a"), served("b"), served("c")];
    held();
    await Promise.all(waits);
    expect(order).toEqual(["x", "a", "b", "c", "a", "a"]);
  });

  it("a waiter whose signal aborts leaves the queue; a release twice frees one slot", async () => {
    const acquire = fairSemaphore(1, 1);
    const order: string[] = [];
    const held = await take(acquire, "a", order);
    const controller = new AbortController();
    const gone = take(acquire, "b", order, controller.signal);
    controller.abort(new Error("deadline"));
    await expect(gone).rejects.toThrow("deadline");
    held();
    held();
    await take(acquire, "c", order);
    // The double release did not open a second slot: d waits.
    let started = false;
    void take(acquire, "d", order).then(() => (started = true));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(started).toBe(false);
    expect(order).toEqual(["a", "c"]);
  });
});
