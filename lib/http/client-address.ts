import { timingSafeEqual } from "node:crypto";
import net from "node:net";
import { config } from "../config.js";
import { EDGE_HEADERS } from "../packaging.js";

// Whose request this is, for every per-address rule (failed-authentication lockout, keyless limits,
// x402's limit before a payment is verified, signups). Behind the stack's own CloudFront, API
// Gateway's sourceIp is an edge server shared by thousands of viewers; CloudFront tells the viewer's
// address (CloudFront-Viewer-Address, or the header its viewer-request function writes: stacks/Cdn.ts),
// but anyone can send those straight to API Gateway. So they are believed only on a request that
// carries the secret origin header our distribution adds (EDGE_SECRET). X-Forwarded-For is never
// read: the client writes it.

/** The viewer's IP in CloudFront-Viewer-Address ("198.51.100.10:46532", "2001:db8::1:46532" or "[2001:db8::1]:46532"), or null. */
function viewerAddress(value: string | undefined): string | null {
  if (!value) return null;
  const text = value.trim();
  const bracketed = /^\[([^\]]+)\]:\d{1,5}$/.exec(text);
  const ip = bracketed ? bracketed[1]! : text.slice(0, text.lastIndexOf(":"));
  return /:\d{1,5}$/.test(text) && net.isIP(ip) ? ip : null;
}

const sameSecret = (given: string | undefined, secret: string): boolean => {
  if (given === undefined) return false;
  const [a, b] = [Buffer.from(given), Buffer.from(secret)];
  return a.length === b.length && timingSafeEqual(a, b);
};

/** The client's address: the viewer's, when the request provably came through our distribution; else API Gateway's sourceIp. */
export function clientAddress(headers: Readonly<Record<string, string>>, sourceIp: string): string {
  const secret = config.EDGE_SECRET;
  if (!secret || !sameSecret(headers[EDGE_HEADERS.secret], secret)) return sourceIp;
  const viewer = headers[EDGE_HEADERS.viewer];
  return (viewer && net.isIP(viewer) ? viewer : null) ?? viewerAddress(headers["cloudfront-viewer-address"]) ?? sourceIp;
}

/**
 * What per-address rules count by: an IPv4 address, or an IPv6 address's /64 (one subscriber's
 * network: whoever is given a /64 has 2^64 addresses to rotate through). An IPv4-mapped IPv6
 * address is its IPv4 one.
 */
export function addressGroup(ip: string): string {
  const address = ip.replace(/%.*$/, "");
  if (!net.isIPv6(address)) return address;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  // An embedded IPv4 tail (::1.2.3.4) stands for two groups; only the first four matter here.
  const groupsOf = (part: string) => (part ? part.split(":").flatMap((g) => (g.includes(".") ? ["0", "0"] : [g])) : []);
  const [head, tail] = address.split("::").map(groupsOf) as [string[], string[] | undefined];
  const groups = tail === undefined ? head : [...head, ...Array(8 - head.length - tail.length).fill("0"), ...tail];
  return `${groups
    .slice(0, 4)
    .map((g) => Number.parseInt(g, 16).toString(16))
    .join(":")}::/64`;
}
