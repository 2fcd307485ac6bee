import { config } from "../config.js";
import { transactionConditionFailed } from "./dynamodb.js";
import { accountKey } from "./keys.js";

// An account's keys of one kind (API keys, signing keys) are counted on its item. Every change moves
// the count in the same transaction as the key, under the limit's condition, so however many changes
// race the count never passes the limit nor the floor. An account from before counts were kept starts
// from what its list holds.

/** An account item's count of keys of one kind. */
export type KeyCounter = "apiKeys" | "signingKeys";

/**
 * The transaction item that adds one key to `counter` while it is below `bound`, or takes one away
 * while it is above `bound`. `held` is the account's list, for a count never kept.
 */
export const countChange = (accountId: string, counter: KeyCounter, held: number, change: { add: 1 | -1; bound: number }) => ({
  Update: {
    TableName: config.TABLE_NAME,
    Key: accountKey(accountId),
    UpdateExpression: "SET #count = if_not_exists(#count, :held) + :add",
    ConditionExpression: `attribute_exists(pk) AND (attribute_not_exists(#count) OR #count ${change.add > 0 ? "<" : ">"} :bound)`,
    ExpressionAttributeNames: { "#count": counter },
    ExpressionAttributeValues: { ":held": held, ":add": change.add, ":bound": change.bound },
  },
});

/** Whether a transaction whose count change is item `index` was refused by its bound. */
export const countRefused = (error: unknown, index: number) => transactionConditionFailed(error, index);
