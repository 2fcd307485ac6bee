import { PutCommand, paginateScan, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { conditionHeld, documents } from "../lib/billing/dynamodb.js";
import { canonicalEmail } from "../lib/billing/emails.js";
import { emailKey } from "../lib/billing/keys.js";
import { config } from "../lib/config.js";
import { keptSpec, type Monitor } from "../lib/monitors/store.js";

// Changes to what the table holds that an operator runs once after upgrading (npm run admin), apart
// from the request paths so that no function's bundle (and role) carries a table scan.

/**
 * Rewrites bonus reservations made before addresses were compared canonically (EMAIL#<the address
 * lower-cased>) in the canonical form, so that another spelling of such an address gets no second
 * bonus. The old items stay (nothing is deleted); a canonical one already there is kept. Safe to
 * run again, and while the service runs. Returns the reservations read and those added.
 */
export async function canonicalizeBonusReservations(): Promise<{ read: number; added: number }> {
  let read = 0;
  let added = 0;
  const pages = paginateScan(
    { client: documents },
    { TableName: config.TABLE_NAME, FilterExpression: "begins_with(pk, :email)", ExpressionAttributeValues: { ":email": "EMAIL#" } },
  );
  for await (const page of pages) {
    for (const item of (page.Items ?? []) as { pk: string; accountId: string }[]) {
      read++;
      const canonical = canonicalEmail(item.pk.slice("EMAIL#".length));
      if (emailKey(canonical).pk === item.pk) continue;
      const put = new PutCommand({
        TableName: config.TABLE_NAME,
        Item: { ...emailKey(canonical), accountId: item.accountId },
        ConditionExpression: "attribute_not_exists(pk)",
      });
      if (await conditionHeld(documents.send(put))) added++;
    }
  }
  return { read, added };
}

/**
 * Seals the secrets of monitors made before secrets were sealed at rest (lib/monitors/store.ts,
 * keptSpec): each one whose request holds a secret is rewritten as a new one would be stored, under
 * a data key of its own, unless it changed meanwhile (its PATCH seals it itself). Safe to run again,
 * and while the service runs. Needs the stack's key (SECRETS_KEY_ID, or the local stack's).
 * Returns the monitors read and those sealed.
 */
export async function sealMonitorSecrets(): Promise<{ read: number; sealed: number }> {
  let read = 0;
  let sealed = 0;
  const pages = paginateScan(
    { client: documents },
    {
      TableName: config.TABLE_NAME,
      FilterExpression: "begins_with(sk, :monitor) AND attribute_not_exists(sealed)",
      ExpressionAttributeValues: { ":monitor": "MON#" },
    },
  );
  for await (const page of pages) {
    for (const monitor of (page.Items ?? []) as (Monitor & { pk: string; sk: string })[]) {
      read++;
      const kept = await keptSpec(monitor, monitor.id);
      if (!kept.sealed) continue;
      const update = new UpdateCommand({
        TableName: config.TABLE_NAME,
        Key: { pk: monitor.pk, sk: monitor.sk },
        UpdateExpression: "SET #request = :request, #options = :options, sealed = :sealed, secretKey = :key",
        ConditionExpression: "attribute_not_exists(sealed) AND #request = :was",
        ExpressionAttributeNames: { "#request": "request", "#options": "options" },
        ExpressionAttributeValues: {
          ":request": kept.request,
          ":options": kept.options,
          ":sealed": kept.sealed,
          ":key": kept.secretKey,
          ":was": monitor.request,
        },
      });
      if (await conditionHeld(documents.send(update))) sealed++;
    }
  }
  return { read, sealed };
}
