import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { inject } from "vitest";
import { LOCAL_CREDENTIALS } from "../../lib/local/ports.js";

// Reads the local stack's table directly, for assertions the API only summarizes (all usage entries).
const info = () => inject("devInfo");
let client: DynamoDBDocumentClient | undefined;
const documents = () =>
  (client ??= DynamoDBDocumentClient.from(new DynamoDBClient({ region: info().region, endpoint: info().dynamodbEndpoint, credentials: LOCAL_CREDENTIALS })));

/** Every usage entry of an account, oldest first. */
export async function allUsageEntries(accountId: string): Promise<{ kind: string; status: string; amount: number; endpoint: string; requestId: string }[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await documents().send(
      new QueryCommand({
        TableName: info().tableName,
        KeyConditionExpression: "pk = :pk AND begins_with(sk, :use)",
        ExpressionAttributeValues: { ":pk": `ACCT#${accountId}`, ":use": "USE#" },
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return items as never;
}
