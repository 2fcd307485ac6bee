import { afterEach, describe, expect, it, vi } from "vitest";

const SECRET = "s".repeat(48);

/** lib/http/client-address.ts as a process with `env` would load it (the configuration is read once, at import). */
async function withEnv(env: Record<string, string>) {
  vi.resetModules();
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  return (await import("../../../lib/http/client-address.js")).clientAddress;
}

afterEach(() => vi.unstubAllEnvs());

describe("the client's address", () => {
  it("is the viewer's only on a request that carries our distribution's secret", async () => {
    const clientAddress = await withEnv({ EDGE_SECRET: SECRET });
    const edge = "130.176.0.1"; // a CloudFront edge: shared by thousands of viewers
    expect(clientAddress({ "x-shotline-edge": SECRET, "x-shotline-viewer-address": "203.0.113.5" }, edge)).toBe("203.0.113.5");
    expect(clientAddress({ "x-shotline-edge": SECRET, "cloudfront-viewer-address": "198.51.100.10:46532" }, edge)).toBe("198.51.100.10");
    expect(clientAddress({ "x-shotline-edge": SECRET, "cloudfront-viewer-address": "2001:db8::1:46532" }, edge)).toBe("2001:db8::1");
    expect(clientAddress({ "x-shotline-edge": SECRET, "cloudfront-viewer-address": "[2001:db8::2]:443" }, edge)).toBe("2001:db8::2");
    // Straight to API Gateway, a client's own claims are ignored: no secret, a wrong one, or X-Forwarded-For.
    const direct = "198.51.100.77";
    expect(clientAddress({ "x-shotline-viewer-address": "203.0.113.5", "cloudfront-viewer-address": "203.0.113.5:1" }, direct)).toBe(direct);
    expect(clientAddress({ "x-shotline-edge": `${SECRET.slice(1)}x`, "x-shotline-viewer-address": "203.0.113.5" }, direct)).toBe(direct);
    expect(clientAddress({ "x-shotline-edge": "short", "x-shotline-viewer-address": "203.0.113.5" }, direct)).toBe(direct);
    expect(clientAddress({ "x-forwarded-for": "203.0.113.5" }, direct)).toBe(direct);
    // With the secret but no usable address: API Gateway's.
    expect(clientAddress({ "x-shotline-edge": SECRET, "x-shotline-viewer-address": "not an ip", "cloudfront-viewer-address": "nonsense" }, edge)).toBe(edge);
  });

  it("is API Gateway's sourceIp where no secret is configured (npm run dev, a stack without a CDN)", async () => {
    const clientAddress = await withEnv({});
    expect(clientAddress({ "x-shotline-edge": "", "x-shotline-viewer-address": "203.0.113.5" }, "127.0.0.1")).toBe("127.0.0.1");
  });
});

describe("what per-address rules count by", () => {
  it("is an IPv4 address, or an IPv6 address's /64: a subscriber cannot rotate through its 2^64 addresses", async () => {
    const { addressGroup } = await import("../../../lib/http/client-address.js");
    expect(addressGroup("203.0.113.5")).toBe("203.0.113.5");
    for (const ip of ["2001:db8:1:2::1", "2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:0db8:0001:0002:0:0:0:9", "2001:db8:1:2::1.2.3.4", "2001:db8:1:2::7%eth0"])
      expect(addressGroup(ip), ip).toBe("2001:db8:1:2::/64");
    expect(addressGroup("2001:db8:1:3::1")).toBe("2001:db8:1:3::/64");
    expect(addressGroup("::1")).toBe("0:0:0:0::/64");
    expect(addressGroup("2001:db8::")).toBe("2001:db8:0:0::/64");
    expect(addressGroup("::ffff:198.51.100.7")).toBe("198.51.100.7");
  });
});
