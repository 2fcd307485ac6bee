import { config } from "../config.js";
import { invalidParams } from "../errors.js";
import { webhookSecretOf } from "../jobs/webhooks.js";
import { resolveTarget } from "../render/guard/network-guard.js";

// Where a customer asks us to send something (a job item's upload, a job's or a monitor's
// webhook): refused at once when the network guard would refuse it, and checked again at every
// connection when it is used.

/** Refuses (400, naming `field`) a URL the network guard would refuse: checked now, and again when it is used. */
export async function assertReachable(field: string, href: string): Promise<void> {
  const url = new URL(href);
  const target = await resolveTarget(url.hostname, Number(url.port || (url.protocol === "https:" ? 443 : 80)), config.privateHosts);
  if (!target.ok) throw invalidParams(`Invalid request: ${field}: ${target.reason}.`);
}

/** Refuses a webhook URL the guard would refuse, or one the account has no secret to sign for. */
export async function assertWebhook(accountId: string, href: string): Promise<void> {
  await assertReachable("webhookUrl", href);
  if (!(await webhookSecretOf(accountId)))
    throw invalidParams("Invalid request: webhookUrl: the account has no webhook secret to sign with; make one with POST /api/v1/webhook-secret.");
}
