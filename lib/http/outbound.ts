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

/** Why the network guard would refuse `href` now, or null: its host resolved within LOOKUP_TIMEOUT_MS. */
async function refusalOf(href: string): Promise<string | null> {
  const url = new URL(href);
  const target = await orTimeout(
    resolveTarget(url.hostname, Number(url.port || (url.protocol === "https:" ? 443 : 80)), config.privateHosts),
    LOOKUP_TIMEOUT_MS,
    () => ({
      ok: false as const,
      reason: `its host did not resolve within ${LOOKUP_TIMEOUT_MS / 1000} s`,
      refused: false,
    }),
  );
  return target.ok ? null : target.reason;
}

/** Refuses (400, naming `field`) a URL the network guard would refuse: checked now, and again when it is used. */
export async function assertReachable(field: string, href: string): Promise<void> {
  const refusal = await refusalOf(href);
  if (refusal) throw invalidParams(`Invalid request: ${field}: ${refusal}.`);
}

/** assertReachable for many URLs at once (a job's uploads): each host looked up once, all together, the first refused field named. */
export async function assertAllReachable(urls: readonly (readonly [field: string, href: string])[]): Promise<void> {
  const byOrigin = new Map<string, Promise<string | null>>();
  const refusals = await Promise.all(
    urls.map(([field, href]) => {
      const origin = new URL(href).origin;
      const refusal = byOrigin.get(origin) ?? refusalOf(href);
      byOrigin.set(origin, refusal);
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
