import { afterEach, describe, expect, it, vi } from "vitest";

// A job's upload URLs are looked up at submit. A DNS zone that never answers cannot run here (tests
// reach loopback only), so the guard's lookup is replaced by one that never settles for names
// under hang.test: what is asserted is the bound, and that the lookups run together, once a host.
const lookups: string[] = [];
vi.mock("../../../lib/render/guard/network-guard.js", () => ({
  resolveTarget: (hostname: string) => {
    lookups.push(hostname);
    if (hostname.endsWith(".hang.test")) return new Promise(() => undefined);
    if (hostname === "private.test") return Promise.resolve({ ok: false, reason: "refused private.test:443: a private address", refused: true });
    return Promise.resolve({ ok: true, address: "192.0.2.1" });
  },
}));
const { assertAllReachable, assertReachable, MAX_HOSTS } = await import("../../../lib/http/outbound.js");

afterEach(() => {
  lookups.length = 0;
});

describe("URLs a request asks us to reach later", () => {
  it("upload URLs on ten hosts that never answer: refused within one lookup's bound, looked up together; an eleventh host is refused before any lookup", async () => {
    const urls = Array.from({ length: 100 }, (_, i) => [`items.${i}.upload.url`, `https://b${i % MAX_HOSTS}.hang.test/put?x=${i}`] as const);
    const started = Date.now();
    await expect(assertAllReachable(urls)).rejects.toMatchObject({
      code: "INVALID_PARAMS",
      message: "Invalid request: items.0.upload.url: its host did not resolve within 2 s.",
    });
    // One after another, this was ten lookups of the resolver's own timeout each.
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(lookups).toHaveLength(MAX_HOSTS);
    lookups.length = 0;
    const eleven = [...urls, ["items.100.upload.url", "https://eleventh.example.test/x"] as const];
    await expect(assertAllReachable(eleven)).rejects.toMatchObject({ message: /name 11 different hosts; at most 10/ });
    expect(lookups).toEqual([]);
  }, 30_000);

  it("one host named by every item is looked up once; a private one is refused naming its field", async () => {
    const same = Array.from({ length: 100 }, (_, i) => [`items.${i}.upload.url`, `https://bucket.example.test/o${i}`] as const);
    await assertAllReachable(same);
    expect(lookups).toEqual(["bucket.example.test"]);
    await expect(assertAllReachable([...same, ["items.100.upload.url", "https://private.test/x"]])).rejects.toMatchObject({
      message: "Invalid request: items.100.upload.url: refused private.test:443: a private address.",
    });
    await expect(assertReachable("webhookUrl", "https://w.hang.test/")).rejects.toMatchObject({ message: /webhookUrl: its host did not resolve within 2 s/ });
  }, 30_000);
});
