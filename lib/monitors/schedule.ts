import { DeleteCommand, GetCommand } from "@aws-sdk/lib-dynamodb";
import { documents, queryPages, transactIf } from "../billing/dynamodb.js";
import { DUE_PARTITION, monitorKey } from "../billing/keys.js";
import { config } from "../config.js";
import { feed } from "../jobs/feed.js";
import { describeError, log } from "../log.js";
import { dueMoves, queuedCheckItems, stillOpen } from "./store.js";

// The monitors' schedule (docs/api.md, "Monitors"): a function run each minute (lib/routes.ts,
// schedules) reads the DUE partition up to now, oldest first, and claims each due monitor in one
// transaction (its next due moved `every` later, on condition that it is still the one read, with
// its due row; a check queued): a monitor is claimed once however many runs meet it. Each account's checks then go to the jobs' workers
// through its feed, as its share of them allows (lib/jobs/feed.ts). One function for every
// monitor: thousands of monitors are thousands of rows, not thousands of schedules.

type DueRow = { pk: string; sk: string; accountId: string; monitorId: string; dueAt: number };

/** Claims at once, per run. */
const PARALLEL = 16;

/**
 * Claims due monitor `row`: its check's id, or null when another run did, the monitor changed
 * (paused, rescheduled, gone), or its last check is still queued or running: then this tick is
 * skipped (its next due moved on, nothing queued, nothing charged), so that a monitor whose checks
 * wait (its account's share of the workers full, a page slow to load) has one check in the backlog.
 */
async function claim(row: DueRow, now: number): Promise<string | null> {
  const { monitorId, accountId, dueAt } = row;
  const key = monitorKey(accountId, monitorId);
  const { Item } = await documents.send(
    new GetCommand({ TableName: config.TABLE_NAME, Key: key, ProjectionExpression: "every, openCheck", ConsistentRead: true }),
  );
  // A due row whose monitor is gone: dropped.
  if (!Item) {
    await documents.send(new DeleteCommand({ TableName: config.TABLE_NAME, Key: { pk: row.pk, sk: row.sk } }));
    return null;
  }
  // The next one after now, on the monitor's cadence (a schedule that fell behind does not queue the missed ones).
  const every = Number(Item.every) * 1000;
  const next = dueAt + Math.max(1, Math.ceil((now + 1 - dueAt) / every)) * every;
  const open = Item.openCheck as string | undefined;
  const skip = open !== undefined && (await stillOpen({ id: monitorId, every: Number(Item.every) }, open, now));
  const queued = queuedCheckItems({ id: monitorId, accountId }, "scheduled", now);
  // The monitor's own condition claims it: once its next due has moved, no other run's holds.
  return transactIf({
    TransactItems: [
      {
        Update: {
          TableName: config.TABLE_NAME,
          Key: key,
          UpdateExpression: skip ? "SET nextDueAt = :next" : "SET nextDueAt = :next, openCheck = :check",
          // Its open check as read: one that ended meanwhile (or one queued meanwhile) makes this run leave it to the next.
          ConditionExpression: `nextDueAt = :due AND paused = :no AND ${open === undefined ? "attribute_not_exists(openCheck)" : "openCheck = :open"}`,
          ExpressionAttributeValues: {
            ":next": next,
            ":due": dueAt,
            ":no": false,
            ...(skip ? {} : { ":check": queued.id }),
            ...(open === undefined ? {} : { ":open": open }),
          },
        },
      },
      ...dueMoves({ id: monitorId, accountId }, dueAt, next),
      ...(skip ? [] : queued.items),
    ],
  }).then((claimed) => (claimed && !skip ? queued.id : null));
}

/** The schedule's run: queues a check of every monitor due by `now`, each once; how many it queued. */
export async function scheduleChecks(now = Date.now()): Promise<number> {
  const accounts = new Set<string>();
  let queued = 0;
  const pages = queryPages({
    KeyConditionExpression: "pk = :pk AND sk <= :now",
    ExpressionAttributeValues: { ":pk": DUE_PARTITION, ":now": `${new Date(now).toISOString()}~` },
    ConsistentRead: true,
  });
  for await (const page of pages) {
    const rows = (page.Items ?? []) as DueRow[];
    for (let i = 0; i < rows.length; i += PARALLEL) {
      const claims = await Promise.all(
        rows.slice(i, i + PARALLEL).map((row) =>
          claim(row, now).catch((error: unknown) => {
            log.error("a due monitor could not be claimed; the next run will", { monitorId: row.monitorId, error: describeError(error) });
            return null;
          }),
        ),
      );
      rows.slice(i, i + PARALLEL).forEach((row, index) => {
        if (claims[index]) {
          queued++;
          accounts.add(row.accountId);
        }
      });
    }
  }
  for (const accountId of accounts)
    await feed(accountId, now).catch((error: unknown) =>
      log.error("feeding an account's checks failed; the reconciler will", { accountId, error: describeError(error) }),
    );
  return queued;
}
