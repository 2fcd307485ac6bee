import net from "node:net";

// Addresses a page may never reach: everything that is not the public internet (IANA special-purpose
// registries for IPv4 and IPv6). Cloud metadata (169.254.169.254, fd00:ec2::254) falls in here.
const blocked = new net.BlockList();
for (const [prefix, bits] of [
  ["0.0.0.0", 8], // "this network", unspecified
  ["10.0.0.0", 8], // private
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local, cloud metadata
  ["172.16.0.0", 12], // private
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.0.2.0", 24], // documentation
  ["192.88.99.0", 24], // 6to4 relay anycast
  ["192.168.0.0", 16], // private
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24], // documentation
  ["203.0.113.0", 24], // documentation
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, broadcast
] as const)
  blocked.addSubnet(prefix, bits, "ipv4");
for (const [prefix, bits] of [
  ["::", 128], // unspecified
  ["::1", 128], // loopback
  ["::", 96], // IPv4-compatible (deprecated)
  ["64:ff9b::", 96], // NAT64: reaches IPv4 through a translator
  ["64:ff9b:1::", 48], // local NAT64
  ["100::", 64], // discard
  ["2001::", 23], // IETF protocol assignments, incl. Teredo 2001::/32
  ["2001:db8::", 32], // documentation
  ["2002::", 16], // 6to4: embeds an IPv4 address
  ["3fff::", 20], // documentation
  ["5f00::", 16], // segment routing
  ["fc00::", 7], // unique local (incl. fd00:ec2::254, EC2 metadata over IPv6)
  ["fe80::", 10], // link-local
  ["fec0::", 10], // site-local (deprecated)
  ["ff00::", 8], // multicast
] as const)
  blocked.addSubnet(prefix, bits, "ipv6");

const MAPPED_V4 = /^::ffff:(?:0:)?(\d+\.\d+\.\d+\.\d+)$/i;
const MAPPED_V4_HEX = /^::ffff:(?:0:)?([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i;

/** An IPv4-mapped IPv6 address (::ffff:a.b.c.d, also written in hex) as the IPv4 it stands for. */
export function unmapIPv4(address: string): string {
  const dotted = MAPPED_V4.exec(address);
  if (dotted) return dotted[1]!;
  const hex = MAPPED_V4_HEX.exec(address);
  if (hex) {
    const high = parseInt(hex[1]!, 16);
    const low = parseInt(hex[2]!, 16);
    return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  }
  return address;
}

/**
 * Why `address` (an IP literal) may not be reached, or null when it is a public address. The reason
 * never names the address: a refused name's answer would otherwise tell anyone what it resolves to
 * inside our network (a free DNS oracle), so private, loopback, link-local and reserved alike are
 * "a private address".
 */
export function refusalReason(address: string): string | null {
  const ip = unmapIPv4(address.replace(/^\[|\]$/g, ""));
  const family = net.isIP(ip);
  if (family === 0) return "not an IP address";
  if (blocked.check(ip, family === 4 ? "ipv4" : "ipv6")) return "a private address";
  return null;
}
