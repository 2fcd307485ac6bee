import { DynamoDBClient, TransactionCanceledException } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.js";

// Created once per container and reused across warm invocations. The endpoint is set only for the
// local stack (DynamoDB Local); on AWS the SDK finds the regional endpoint itself.
export const dynamodb = new DynamoDBClient({
  region: config.AWS_REGION,
  ...(config.DYNAMODB_ENDPOINT ? { endpoint: config.DYNAMODB_ENDPOINT } : {}),
});

/** Document client: plain JS values in and out; undefined fields are dropped. */
export const documents = DynamoDBDocumentClient.from(dynamodb, {
  marshallOptions: { removeUndefinedValues: true },
});

/** Whether a transaction was cancelled because the condition of its item at `index` failed. */
export const transactionConditionFailed = (error: unknown, index: number) =>
  error instanceof TransactionCanceledException && error.CancellationReasons?.[index]?.Code === "ConditionalCheckFailed";
