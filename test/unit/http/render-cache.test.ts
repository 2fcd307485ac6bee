import { describe, expect, it } from "vitest";
import { cacheHashOf } from "../../../lib/http/render-cache.js";

// The render cache's key (the lookups, leases and storage run against DynamoDB Local and s3rver in
// test/integration/render-cache.test.ts).
describe("the render cache key", () => {
  const body = { url: "https://example.com", width: 1280, fullPage: false, responseFormat: "binary", cacheTtl: 60 };

  it("is stable: the same request in any key order, whatever its answer form or TTL, is the same entry", () => {
    const reordered = { cacheTtl: 5, responseFormat: "json", fullPage: false, width: 1280, url: "https://example.com" };
    expect(cacheHashOf("screenshot", "acct-1", reordered)).toBe(cacheHashOf("screenshot", "acct-1", body));
    expect(cacheHashOf("screenshot", "acct-1", body)).toMatch(/^[0-9a-f]{64}$/);
  });

  it("separates customers, routes, cacheKeys and every field that changes the output", () => {
    const hash = cacheHashOf("screenshot", "acct-1", body);
    expect(cacheHashOf("screenshot", "acct-2", body)).not.toBe(hash);
    expect(cacheHashOf("html-to-screenshot", "acct-1", body)).not.toBe(hash);
    expect(cacheHashOf("screenshot", "acct-1", { ...body, cacheKey: "a" })).not.toBe(hash);
    expect(cacheHashOf("screenshot", "acct-1", { ...body, cacheKey: "a" })).not.toBe(cacheHashOf("screenshot", "acct-1", { ...body, cacheKey: "b" }));
    expect(cacheHashOf("screenshot", "acct-1", { ...body, fullPage: true })).not.toBe(hash);
    expect(cacheHashOf("screenshot", "acct-1", { ...body, headers: { "x-tenant": "1" } })).not.toBe(hash);
  });
});
