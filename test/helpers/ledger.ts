import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, GetCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
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

/** One item of the table by key, or undefined. */
export async function getItem(pk: string, sk: string): Promise<Record<string, unknown> | undefined> {
  return (await documents().send(new GetCommand({ TableName: info().tableName, Key: { pk, sk }, ConsistentRead: true }))).Item;
}
