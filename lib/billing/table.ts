import type { CreateTableCommandInput } from "@aws-sdk/client-dynamodb";

// The one DynamoDB table (single-table design, DESIGN.md). stacks/Storage.ts deploys it from this
// definition and lib/local creates it in DynamoDB Local from the same one, so they cannot drift.
export const TABLE = {
  fields: { pk: "string", sk: "string" },
  primaryIndex: { partitionKey: "pk", sortKey: "sk" },
  /** Epoch seconds; DynamoDB deletes expired items lazily (rate-limit windows, idempotency records). */
  timeToLiveAttribute: "expiresAt",
} as const;

/** The CreateTable request for DynamoDB Local (on-demand, like the deployed table). */
export function createTableInput(tableName: string): CreateTableCommandInput {
  return {
    TableName: tableName,
    BillingMode: "PAY_PER_REQUEST",
    AttributeDefinitions: Object.keys(TABLE.fields).map((name) => ({ AttributeName: name, AttributeType: "S" })),
    KeySchema: [
      { AttributeName: TABLE.primaryIndex.partitionKey, KeyType: "HASH" },
      { AttributeName: TABLE.primaryIndex.sortKey, KeyType: "RANGE" },
    ],
  };
}
