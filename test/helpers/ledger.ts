import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, ScanCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { inject } from "vitest";
import { LOCAL_CREDENTIALS } from "../../dev/ports.js";

// Reads the local stack's table directly, for assertions the API only summarizes (all usage entries),
// and changes one attribute where a test stages a fault DynamoDB Local cannot produce by itself.
type StackInfo = { region: string; dynamodbEndpoint: string; tableName: string };
const clients = new Map<string, DynamoDBDocumentClient>();
const documents = (stack: StackInfo) => {
  let client = clients.get(stack.dynamodbEndpoint);
  if (!client) {
    client = DynamoDBDocumentClient.from(new DynamoDBClient({ region: stack.region, endpoint: stack.dynamodbEndpoint, credentials: LOCAL_CREDENTIALS }));
    clients.set(stack.dynamodbEndpoint, client);
  }
  return client;
};

/** Every usage entry of an account, oldest first (on the shared test stack unless `stack` says otherwise). */
export async function allUsageEntries(
  accountId: string,
  stack: StackInfo = inject("devInfo"),
): Promise<{ kind: string; status: string; amount: number; endpoint: string; requestId: string; delivered?: boolean }[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await documents(stack).send(
      new QueryCommand({
        TableName: stack.tableName,
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
  const stack = inject("devInfo");
  return (await documents(stack).send(new GetCommand({ TableName: stack.tableName, Key: { pk, sk }, ConsistentRead: true }))).Item;
}

/** Writes an item whole (a test staging a state another instance would hold). */
export async function putItem(item: Record<string, unknown> & { pk: string; sk: string }): Promise<void> {
  const stack = inject("devInfo");
  await documents(stack).send(new PutCommand({ TableName: stack.tableName, Item: item }));
}

/** Sets one attribute of an existing item (a test staging a state the service would not write itself). */
export async function setAttribute(pk: string, sk: string, name: string, value: unknown): Promise<void> {
  const stack = inject("devInfo");
  await documents(stack).send(
    new UpdateCommand({
      TableName: stack.tableName,
      Key: { pk, sk },
      UpdateExpression: "SET #name = :value",
      ConditionExpression: "attribute_exists(pk)",
      ExpressionAttributeNames: { "#name": name },
      ExpressionAttributeValues: { ":value": value },
    }),
  );
}

/** Every item of the table, as stored (a test that looks for what must never be stored). */
export async function scanTable(): Promise<Record<string, unknown>[]> {
  const stack = inject("devInfo");
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await documents(stack).send(new ScanCommand({ TableName: stack.tableName, ConsistentRead: true, ExclusiveStartKey: start }));
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}
