import { inject } from "vitest";
import { LOCAL_CREDENTIALS } from "../../dev/ports.js";

/**
 * Points this test worker's environment at the shared local stack (its DynamoDB Local and s3rver),
 * so that lib modules and handlers imported afterwards run in process against the real table, as a
 * Lambda would. Call it before the first import of anything that reads lib/config.ts.
 */
export function useSharedStackInProcess(extra: Record<string, string> = {}) {
  const info = inject("devInfo");
  Object.assign(process.env, {
    TABLE_NAME: info.tableName,
    BUCKET_NAME: info.bucketName,
    DYNAMODB_ENDPOINT: info.dynamodbEndpoint,
    S3_ENDPOINT: info.s3Endpoint,
    AWS_REGION: info.region,
    AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
    ...extra,
  });
}
