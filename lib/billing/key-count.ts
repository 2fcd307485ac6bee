import { config } from "../config.js";
import { transactionConditionFailed } from "./dynamodb.js";
import { accountKey } from "./keys.js";

// An account's keys of one kind (API keys, signing keys) are counted on its item, so that a limit
// holds however many changes race: each change is a transaction whose last item sets the count to
// what it will be, only if it still says what was just listed (or was never kept).

/** An account item's count of keys of one kind. */
export type KeyCounter = "apiKeys" | "signingKeys";

/**
 * How often a change is tried again when another changed the keys first. Each lost try means
 * another change landed, so with creations alone the count reaches its limit first; the bound is
 * for a storm of revocations and creations racing without end.
 */
const KEY_CHANGE_TRIES = 50;

/** The transaction item that sets `counter` to `next` only if it still says `held`; it goes last in its transaction (see countRaced). */
export const countUpdate = (accountId: string, counter: KeyCounter, held: number, next: number) => ({
  Update: {
    TableName: config.TABLE_NAME,
    Key: accountKey(accountId),
    UpdateExpression: "SET #count = :next",
    ConditionExpression: "attribute_exists(pk) AND (attribute_not_exists(#count) OR #count = :held)",
    ExpressionAttributeNames: { "#count": counter },
    ExpressionAttributeValues: { ":next": next, ":held": held },
  },
});

/** Whether a transaction whose count update is item `index` lost to another change. */
export const countRaced = (error: unknown, index: number) => transactionConditionFailed(error, index);

/** Runs `change` with the number of keys held now (`held` lists them), again while another change got there first (its count update at `index`). */
export async function withKeyCount<T>(held: () => Promise<number>, index: number, change: (held: number) => Promise<T>): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await change(await held());
    } catch (error) {
      if (!countRaced(error, index) || tries === KEY_CHANGE_TRIES) throw error;
    }
  }
}
