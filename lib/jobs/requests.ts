import { GetObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { type KeptRequest, openRequest, sealRequest } from "../api/secrets.js";
import { config } from "../config.js";
import { JOBS_PREFIX } from "../packaging.js";
import { s3 } from "../storage/s3.js";
import { travelsInMessage } from "./queue.js";

// A job's items in the bucket, under jobs/<job id>/ (kept as long as the job: stacks/Storage.ts):
// each item's request as validated when it is too large for its message, and its output. The
// functions that touch neither import only lib/jobs/store.ts.

/** Where item `index`'s request is kept. */
const requestKey = (jobId: string, index: number) => `${JOBS_PREFIX}${jobId}/requests/${index}.json`;

/** Where an item's output (an image, a PDF, a content answer) is kept. */
export const outputKeyOf = (jobId: string, index: number, extension: string) => `${JOBS_PREFIX}${jobId}/outputs/${index}.${extension}`;

/** Whose item's secrets a sealed request holds: they open for it alone. */
const itemContext = (jobId: string, index: number) => `item ${jobId}.${index}`;

/** The validated `requests` of job `jobId` as kept at rest, their secrets sealed (lib/api/secrets.ts), ten at a time. */
export async function sealRequests<T extends object>(jobId: string, requests: readonly T[]): Promise<{ request: KeptRequest<T>; secretKey?: string }[]> {
  const kept: { request: KeptRequest<T>; secretKey?: string }[] = [];
  for (let start = 0; start < requests.length; start += 10)
    kept.push(...(await Promise.all(requests.slice(start, start + 10).map((request, i) => sealRequest(request, itemContext(jobId, start + i))))));
  return kept;
}

/** Item `index`'s request as it was given, its secrets opened with `secretKey`. */
export const openItemRequest = <T extends object>(jobId: string, index: number, kept: KeptRequest<T>, secretKey: string | undefined): Promise<T> =>
  openRequest(kept, secretKey, itemContext(jobId, index));

/**
 * Stores the validated `requests` of job `jobId` that do not travel in their messages (lib/jobs/queue.ts),
 * ten at a time (more at once would only queue in the SDK's socket pool).
 */
export async function storeRequests(jobId: string, requests: readonly unknown[]): Promise<void> {
  const large = [...requests.entries()].filter(([, request]) => !travelsInMessage(request));
  for (let start = 0; start < large.length; start += 10) {
    await Promise.all(
      large.slice(start, start + 10).map(([index, request]) => putObject(requestKey(jobId, index), JSON.stringify(request), "application/json")),
    );
  }
}

/** The request of item `index`, as validated when the job was made. */
export async function loadRequest(jobId: string, index: number): Promise<unknown> {
  const { Body } = await s3.send(new GetObjectCommand({ Bucket: config.BUCKET_NAME, Key: requestKey(jobId, index) }));
  return JSON.parse(await Body!.transformToString("utf8")) as unknown;
}

/** Keeps `body` at `key` in the bucket. */
export const putObject = (key: string, body: Buffer | string, contentType: string) =>
  s3.send(new PutObjectCommand({ Bucket: config.BUCKET_NAME, Key: key, Body: body, ContentType: contentType }));
