import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { conditionHeld, documents, ignoreFailedCondition, queryAll } from "../billing/dynamodb.js";
import { OPEN_PARTITION, openKey, pendingKey, type TableKey, usageKey } from "../billing/keys.js";
import { type Charge, chargeForRequest, markDelivered, refundCharge } from "../billing/ledger.js";
import { config } from "../config.js";
import { type Deadline, whenAborted } from "../deadline.js";
import { AppError } from "../errors.js";
import { describeError, log } from "../log.js";
import { JOB_MAX_RECEIVES } from "../packaging.js";
import { itemDone } from "./feed.js";
import type { ItemMessage } from "./queue.js";
import { CHARGE_HOLD_MS } from "./worker-time.js";

// How a jobs worker attempts a piece of work, a job's item (lib/jobs/run.ts) or a monitor's check
// (lib/monitors/check.ts), the one way for both: a lease taken on its row (a live worker's piece is
// not run twice; a dead one's is taken over when its lease ends), a charge under the piece's own
// request id at the time of its first start (a second charge of it is the same entry, left alone by
// the reconciler for CHARGE_HOLD_MS), the work run under its budget, then its charge delivered, or
// refunded when it failed. A failure of our own is thrown, so that the queue delivers the message
// again, up to JOB_MAX_RECEIVES times; at the last, the piece fails instead.
// While taken, a piece has a row in the OPEN partition. One whose worker died on its last delivery
// (out of memory, killed at its time limit: its message goes to the dead-letter queue, and nothing
// else would end it) is ended by the sweeper (sweepDead: the reconciler for items, the monitors'
// schedule for checks, each minute): failed, its charge refunded or its hold released, once, its
// end announced, its slot let go.

/** A piece of work: where its row is, whose it is, and its charge's request id. */
export interface Piece {
  readonly kind: "item" | "check" | "page";
  readonly accountId: string;
  /** Its job's or monitor's id. */
  readonly owner: string;
  /** Its index in its job, or its check id. */
  readonly id: number | string;
  readonly key: TableKey;
  readonly requestId: string;
}

/** What a lease leaves on a piece's row. */
export interface Lease {
  readonly status: string;
  /** The charge's time, fixed at the first start: a restart charges the same entry. */
  readonly chargeAt?: string;
  /** Until when the worker that took it holds it (epoch ms); past it, a redelivery may take it over. */
  readonly leaseUntil?: number;
  /** The delivery of its message that took it (or found it held) last: at JOB_MAX_RECEIVES, none comes after. */
  readonly receives?: number;
  /** The slot of its account's share of the workers its message holds (lib/jobs/feed.ts). */
  readonly slot?: ItemMessage["slot"];
}

/** An OPEN row of a piece not running is left this long: its worker may be taking it. */
const OPEN_GRACE_MS = 60_000;

type OpenRow = TableKey & Omit<Piece, "key"> & { readonly at: number; readonly piece: TableKey };

const openOf = (piece: Piece) => openKey(piece.kind, piece.accountId, piece.owner, piece.id);

/**
 * Takes `piece` for a worker until `leaseUntil`: a queued one, or a running one whose worker's lease
 * has ended (it died), noting the delivery (`receives`) and the slot its message holds. Its OPEN row
 * is written first, so that a piece taken always has one (a row written for a piece not taken, ended
 * or held by a live worker, is the same row or one the sweeper drops). The row as taken, or null
 * when it is not to be run (ended, cancelled, gone, or held by a live worker).
 */
export async function takeLease<T extends Lease>(
  piece: Piece,
  leaseUntil: number,
  receives = 1,
  slot?: ItemMessage["slot"],
  now = Date.now(),
): Promise<T | null> {
  await documents.send(
    new PutCommand({
      TableName: config.TABLE_NAME,
      Item: {
        ...openOf(piece),
        kind: piece.kind,
        accountId: piece.accountId,
        owner: piece.owner,
        id: piece.id,
        requestId: piece.requestId,
        piece: piece.key,
        at: now,
      },
    }),
  );
  const { Attributes } = await documents
    .send(
      new UpdateCommand({
        TableName: config.TABLE_NAME,
        Key: piece.key,
        UpdateExpression: `SET #status = :running, leaseUntil = :lease, receives = :receives, chargeAt = if_not_exists(chargeAt, :now), startedAt = if_not_exists(startedAt, :now)${slot ? ", slot = :slot" : ""}`,
        ConditionExpression: "#status = :queued OR (#status = :running AND leaseUntil < :nowMs)",
        ExpressionAttributeNames: { "#status": "status" },
        ExpressionAttributeValues: {
          ":running": "running",
          ":queued": "queued",
          ":lease": leaseUntil,
          ":receives": receives,
          ":now": new Date(now).toISOString(),
          ":nowMs": now,
          ...(slot ? { ":slot": slot } : {}),
        },
        ReturnValues: "ALL_NEW",
      }),
    )
    .catch((error: unknown) => {
      ignoreFailedCondition(error);
      return { Attributes: undefined };
    });
  return (Attributes as T | undefined) ?? null;
}

/**
 * A delivery that found its piece held by a live worker: "busy" (the message comes back). On the
 * last delivery, the piece is marked so: should that worker die, no message is left to take it over,
 * and the sweeper ends it.
 */
export async function heldElsewhere(piece: Piece, receives: number): Promise<"busy"> {
  if (receives >= JOB_MAX_RECEIVES)
    await conditionHeld(
      documents.send(
        new UpdateCommand({
          TableName: config.TABLE_NAME,
          Key: piece.key,
          UpdateExpression: "SET receives = :receives",
          ConditionExpression: "#status = :running",
          ExpressionAttributeNames: { "#status": "status" },
          ExpressionAttributeValues: { ":receives": receives, ":running": "running" },
        }),
      ),
    );
  return "busy";
}

/** Removes an ended piece's OPEN row. */
export const closeLease = (piece: Pick<Piece, "kind" | "accountId" | "owner" | "id">) =>
  documents.send(new DeleteCommand({ TableName: config.TABLE_NAME, Key: openKey(piece.kind, piece.accountId, piece.owner, piece.id) }));

/** What charging a piece takes: its price, the endpoint its usage names, and the job's hold it comes out of, if any. */
export interface Price {
  readonly amount: number;
  readonly endpoint: string;
  readonly hold?: string;
}

/**
 * Charges `piece`, as taken (`lease`): keyed by the piece, at the time of its first start, held from
 * the reconciler for CHARGE_HOLD_MS; out of its job's hold when it has one. The same piece charged
 * again (a redelivery) is the same charge.
 */
export const chargePiece = (piece: Piece, lease: Lease, price: Price, delivered?: true): Promise<Charge> =>
  chargeForRequest(piece.accountId, price.amount, {
    requestId: piece.requestId,
    endpoint: price.endpoint,
    at: new Date(lease.chargeAt!),
    holdUntil: Date.parse(lease.chargeAt!) + CHARGE_HOLD_MS,
    ...(price.hold ? { hold: price.hold } : {}),
    ...(delivered ? { delivered } : {}),
  });

/** One attempt of a taken piece: how it is charged, its work and budget, and how it ends. */
export interface Attempt<Made> {
  readonly piece: Piece;
  /** The piece as taken. */
  readonly lease: Lease;
  /** The delivery of its message this is. */
  readonly receiveCount: number;
  /**
   * Its price, charged before the work; or, as a function of what the work made, charged after it
   * (a crawl's page costs more when a browser ran), null when nothing is charged (a page skipped).
   */
  readonly price: Price | ((made: Made) => Price | null);
  /** When the work must be done, the error it fails with then, and its page-load limit if it has its own. */
  readonly budget: { readonly at: number; readonly timeout: AppError; readonly pageLoadMs?: number };
  /** The work: what it keeps of itself (its outputs stored). */
  work(deadline: Deadline): Promise<Made>;
  /**
   * Ends the piece as done, its charge (as the ledger has it: a redelivery's is the first's) delivered.
   * What fails here is thrown (its message comes back, finds it ended or takes it over).
   */
  succeeded(made: Made, charge: Charge | null): Promise<void>;
  /**
   * Ends the piece failed, not charged: its charge was refused (`unpaid`), or its work failed and it
   * was refunded after running `ranMs`.
   */
  failed(error: AppError, how: { readonly unpaid: boolean; readonly ours: boolean; readonly ranMs: number }): Promise<void>;
}

/**
 * Attempts a taken piece: charges it, runs its work under its budget, delivers the charge and ends
 * it succeeded; or, the charge refused, ends it failed; or, the work failed, refunds it and ends it
 * failed, unless the failure is our own (not an AppError, or INTERNAL_ERROR) and a delivery is left,
 * when it is thrown for the queue to deliver the message again.
 */
export async function attempt<Made>(a: Attempt<Made>, now = Date.now()): Promise<void> {
  let charge: Charge | null = null;
  // A charge made after the work: born delivered, never refunded here.
  let paid: Charge | null = null;
  const charged = async (price: Price, delivered?: true): Promise<Charge | AppError> => {
    try {
      return await chargePiece(a.piece, a.lease, price, delivered);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      return error;
    }
  };
  if (typeof a.price !== "function") {
    const before = await charged(a.price);
    if (before instanceof AppError) return a.failed(before, { unpaid: true, ours: false, ranMs: 0 });
    charge = before;
  }
  const budget = whenAborted(a.budget.at, a.budget.timeout);
  let made: Made;
  try {
    made = await a.work({ at: a.budget.at, signal: budget.signal, ...(a.budget.pageLoadMs ? { pageLoadMs: a.budget.pageLoadMs } : {}) });
    if (typeof a.price === "function") {
      // The output is made and kept: its charge is born delivered.
      const price = a.price(made);
      const after = price && (await charged(price, true));
      if (after instanceof AppError) return a.failed(after, { unpaid: true, ours: false, ranMs: Date.now() - now });
      paid = after;
    } else if (charge) await markDelivered(charge); // the output is made and kept: it is charged
  } catch (error) {
    const ours = !(error instanceof AppError) || error.code === "INTERNAL_ERROR";
    if (ours && a.receiveCount < JOB_MAX_RECEIVES) throw error;
    log.warn(`job ${a.piece.kind} failed`, { owner: a.piece.owner, id: a.piece.id, error: describeError(error) });
    if (charge) await refundCharge(charge);
    const failure = ours ? new AppError("INTERNAL_ERROR", `The ${a.piece.kind} could not be run; it was not charged.`) : error;
    return a.failed(failure, { unpaid: false, ours, ranMs: Date.now() - now });
  } finally {
    budget.clear();
  }
  await a.succeeded(made, charge ?? paid);
}

/** What became of a dead piece's charge: none was made (its hold, if any, still holds its price), refunded now (or before), or delivered (it stands). */
type DeadCharge = { readonly state: "none" | "refunded" } | { readonly state: "delivered"; readonly amount: number };

/** Refunds what a dead piece was charged, once, unless it was delivered. */
async function settleDeadCharge(open: OpenRow, lease: Lease): Promise<DeadCharge> {
  if (!lease.chargeAt) return { state: "none" };
  const at = new Date(lease.chargeAt);
  const entry = usageKey(open.accountId, at, open.requestId);
  const { Item } = await documents.send(new GetCommand({ TableName: config.TABLE_NAME, Key: entry, ConsistentRead: true }));
  if (!Item) return { state: "none" };
  if (Item.delivered) return { state: "delivered", amount: Number(Item.amount) };
  // A refund already made is not made again (the entry's condition).
  await refundCharge({
    accountId: open.accountId,
    amount: Number(Item.amount),
    entry,
    requestId: open.requestId,
    pending: pendingKey(at, open.accountId, open.requestId),
  });
  return { state: "refunded" };
}

/** A dead piece, for its kind's ending: its OPEN row (whose, which), its row as its worker left it, and its charge. */
export interface DeadPiece {
  readonly open: Pick<Piece, "accountId" | "owner" | "id" | "requestId">;
  readonly lease: Lease;
  readonly charge: DeadCharge;
}

/** The error a dead piece ends with. */
export const diedError = (kind: Piece["kind"], charge: DeadCharge) =>
  new AppError(
    "INTERNAL_ERROR",
    `The ${kind}'s worker stopped (out of memory, or at its time limit) on its last delivery; ${charge.state === "delivered" ? "its output was kept and charged" : "it was not charged"}.`,
  );

/**
 * The sweeper's round of `kind` at `now`: reads the OPEN partition's rows of that kind (only what is
 * taken and not ended), drops those whose piece has ended, and ends each piece whose worker died on
 * its last delivery (running, its lease over, no delivery left): its charge refunded once (or, never
 * charged, `end` gives its hold back), `end` ending it failed and announcing it, its slot let go.
 * Returns how many it ended. Safe to run twice at once: every write is conditional or idempotent.
 */
export async function sweepDead(kind: Piece["kind"], now: number, end: (dead: DeadPiece) => Promise<void>): Promise<number> {
  let swept = 0;
  for (const open of await queryAll<OpenRow>(OPEN_PARTITION, `${kind}#`)) {
    try {
      const { Item } = await documents.send(new GetCommand({ TableName: config.TABLE_NAME, Key: open.piece, ConsistentRead: true }));
      const lease = Item as Lease | undefined;
      // Ended (its worker stopped between ending it and closing it), or gone with its job or monitor;
      // not one written a moment ago for a piece its worker is about to take (takeLease).
      if (lease?.status !== "running") {
        if (now - open.at >= OPEN_GRACE_MS) await closeLease({ ...open, kind });
        continue;
      }
      // A live worker's, or its message will come back and take it over.
      if ((lease.leaseUntil ?? 0) >= now || (lease.receives ?? 0) < JOB_MAX_RECEIVES) continue;
      const charge = await settleDeadCharge(open, lease);
      await end({ open, lease, charge });
      await itemDone({ slot: lease.slot }, open.accountId);
      await closeLease({ ...open, kind });
      log.warn(`a job ${kind} whose worker died on its last delivery was ended`, { owner: open.owner, id: open.id, charge: charge.state });
      swept++;
    } catch (error) {
      log.error(`a dead job ${kind} could not be ended; the next sweep will`, { owner: open.owner, id: open.id, error: describeError(error) });
    }
  }
  return swept;
}
