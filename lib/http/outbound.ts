import { lookup, Resolver } from "node:dns/promises";
import { config } from "../config.js";
import { orTimeout } from "../deadline.js";
import { invalidParams } from "../errors.js";
import { webhookSecretOf } from "../jobs/webhooks.js";
import { resolveTarget } from "../render/guard/network-guard.js";

// Where a customer asks us to send something (a job item's upload, a job's or a monitor's
// webhook): refused at once when the network guard would refuse it, and checked again at every
// connection when it is used.

/**
 * A name's lookup at submit gives up after this long: a DNS zone that never answers must not hold a
 * request (and the route's few instances) for the resolver's own 5 s x its retries. The URL is
 * refused then, as one that does not resolve.
 */
const LOOKUP_TIMEOUT_MS = 2_000;
/** Different hosts one request may ask us to reach (a job's uploads): each is a lookup. */
export const MAX_HOSTS = 10;

/**
 * A name's addresses from DNS itself (c-ares, one try of LOOKUP_TIMEOUT_MS), not the system's
 * resolver: getaddrinfo runs on Node's four worker threads and cannot be stopped, so lookups of a
 * zone that never answers would hold them, and every lookup of the function's next requests behind
 * them. This machine's own names (localhost) are the system's: DNS does not know them.
 */
async function lookupByDns(host: string): Promise<string[]> {
  if (host === "localhost" || host.endsWith(".localhost")) return (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
  const resolver = new Resolver({ timeout: LOOKUP_TIMEOUT_MS, tries: 1 });
  const [v4, v6] = await Promise.all([resolver.resolve4(host).catch(() => []), resolver.resolve6(host).catch(() => [])]);
  if (v4.length + v6.length === 0) throw new Error(`${host} did not resolve`);
  return [...v4, ...v6];
}

/** Why the network guard would refuse `href` now, or null: its host resolved within LOOKUP_TIMEOUT_MS. */
async function refusalOf(href: string): Promise<string | null> {
  const url = new URL(href);
  const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
  // The resolver's own timeout ends the lookup; this one answers should it not.
  const target = await orTimeout(resolveTarget(url.hostname, port, config.privateHosts, lookupByDns), LOOKUP_TIMEOUT_MS + 500, () => ({
    ok: false as const,
    reason: `its host did not resolve within ${LOOKUP_TIMEOUT_MS / 1000} s`,
    refused: false,
  }));
  return target.ok ? null : target.reason;
}

/** Refuses (400, naming `field`) a URL the network guard would refuse: checked now, and again when it is used. */
export async function assertReachable(field: string, href: string): Promise<void> {
  const refusal = await refusalOf(href);
  if (refusal) throw invalidParams(`Invalid request: ${field}: ${refusal}.`);
}

/** assertReachable for many URLs at once (a job's uploads): MAX_HOSTS different hosts at most, each looked up once, all together, the first refused field named. */
export async function assertAllReachable(urls: readonly (readonly [field: string, href: string])[]): Promise<void> {
  const hosts = new Set(urls.map(([, href]) => new URL(href).host));
  if (hosts.size > MAX_HOSTS)
    throw invalidParams(`Invalid request: the URLs to send to name ${hosts.size} different hosts; at most ${MAX_HOSTS} (${urls[0]![0]} and the rest).`);
  const byHost = new Map<string, Promise<string | null>>();
  const refusals = await Promise.all(
    urls.map(([field, href]) => {
      const host = new URL(href).host;
      const refusal = byHost.get(host) ?? refusalOf(href);
      byHost.set(host, refusal);
      return refusal.then((reason) => (reason ? `${field}: ${reason}` : null));
    }),
  );
  const first = refusals.find((refusal) => refusal !== null);
  if (first) throw invalidParams(`Invalid request: ${first}.`);
}

/** Refuses a webhook URL the guard would refuse, or one the account has no secret to sign for. */
export async function assertWebhook(accountId: string, href: string): Promise<void> {
  await assertReachable("webhookUrl", href);
  if (!(await webhookSecretOf(accountId)))
    throw invalidParams("Invalid request: webhookUrl: the account has no webhook secret to sign with; make one with POST /api/v1/webhook-secret.");
}
