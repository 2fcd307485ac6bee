import { describe, expect, it } from "vitest";
import { refusalReason, unmapIPv4 } from "../../../../lib/render/guard/address-policy.js";

describe("refusalReason", () => {
  it.each([
    "0.0.0.0",
    "10.1.2.3",
    "100.64.0.1",
    "100.127.255.254",
    "127.0.0.1",
    "127.255.255.255",
    "169.254.169.254",
    "172.16.0.1",
    "172.31.255.255",
    "192.0.0.8",
    "192.0.2.1",
    "192.168.0.1",
    "198.18.0.1",
    "198.51.100.7",
    "203.0.113.9",
    "224.0.0.1",
    "239.255.255.250",
    "240.0.0.1",
    "255.255.255.255",
    "::",
    "::1",
    "::ffff:127.0.0.1",
    "::ffff:7f00:1",
    "::ffff:a9fe:a9fe",
    "::127.0.0.1",
    "64:ff9b::7f00:1",
    "2001::1",
    "2001:db8::1",
    "2002:7f00:1::",
    "fc00::1",
    "fd00:ec2::254",
    "fe80::1",
    "fec0::1",
    "ff02::1",
    "[::1]",
  ])("refuses %s", (address) => {
    // Never the address itself: a refusal must not say what a name resolved to.
    expect(refusalReason(address)).toBe("a private address");
  });

  it.each([
    "1.1.1.1",
    "8.8.8.8",
    "93.184.215.14",
    "100.63.255.255",
    "100.128.0.1",
    "172.15.255.255",
    "172.32.0.1",
    "192.169.0.1",
    "2606:4700:4700::1111",
    "2a00:1450:4001:80b::200e",
    "::ffff:8.8.8.8",
  ])("allows the public address %s", (address) => {
    expect(refusalReason(address)).toBeNull();
  });

  it("refuses what is not an IP address at all", () => {
    expect(refusalReason("localhost")).toMatch(/not an IP address/);
  });
});

describe("unmapIPv4", () => {
  it("turns IPv4-mapped IPv6 (dotted or hex) into IPv4 and leaves other addresses alone", () => {
    expect(unmapIPv4("::ffff:10.0.0.1")).toBe("10.0.0.1");
    expect(unmapIPv4("::FFFF:0a00:0001")).toBe("10.0.0.1");
    expect(unmapIPv4("::ffff:0:7f00:1")).toBe("127.0.0.1");
    expect(unmapIPv4("2001:db8::1")).toBe("2001:db8::1");
  });
});
