import { randomUUID } from "node:crypto";
import { GetObjectCommand, HeadObjectCommand, NotFound, PutObjectCommand } from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { config } from "../config.js";
import { CACHE_PREFIX, CACHE_RETENTION_DAYS } from "../packaging.js";
import { s3 } from "./s3.js";

/** A stored output: its key in the bucket and the presigned link that fetches it until `expiresAt`. */
export interface StoredOutput {
  readonly key: string;
  readonly url: string;
  readonly expiresAt: string;
}

/** Stored outputs' keys: `outputs/<day>/<uuid>.<extension>`. */
export const OUTPUT_KEY = /^outputs\/(\d{4}-\d{2}-\d{2})\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.(?:png|jpg|webp|avif|pdf))$/;

/**
 * Stores an output too large to return inline (Lambda responses cap at 6 MB, base64 inflates by a
 * third) and returns a presigned GET link. The bucket's lifecycle rule deletes it after a day.
 */
export async function storeOutput(body: Buffer, contentType: string, extension: string): Promise<StoredOutput> {
  const key = `outputs/${new Date().toISOString().slice(0, 10)}/${randomUUID()}.${extension}`;
  await s3.send(
    new PutObjectCommand({
      Bucket: config.BUCKET_NAME,
      Key: key,
      Body: body,
      ContentType: contentType,
      ContentDisposition: `inline; filename="screenshot.${extension}"`,
    }),
  );
  const expiresIn = config.DOWNLOAD_LINK_SECONDS;
  const url = await getSignedUrl(s3, new GetObjectCommand({ Bucket: config.BUCKET_NAME, Key: key }), { expiresIn });
  return { key, url, expiresAt: new Date(Date.now() + expiresIn * 1000).toISOString() };
}

/** A presigned link to the stored output `key` for `seconds`, or null when it is no longer stored. */
export async function linkToOutput(key: string, seconds: number): Promise<string | null> {
  try {
    await s3.send(new HeadObjectCommand({ Bucket: config.BUCKET_NAME, Key: key }));
  } catch (error) {
    if (error instanceof NotFound) return null;
    throw error;
  }
  return getSignedUrl(s3, new GetObjectCommand({ Bucket: config.BUCKET_NAME, Key: key }), { expiresIn: seconds });
}

/** Keeps the body of an answer too large for its idempotency record (docs/agents.md, "Safe retries"); the lifecycle rule deletes it after a day. Returns its key. */
export async function storeAnswerBody(body: Buffer): Promise<string> {
  const key = `answers/${new Date().toISOString().slice(0, 10)}/${randomUUID()}`;
  await s3.send(new PutObjectCommand({ Bucket: config.BUCKET_NAME, Key: key, Body: body }));
  return key;
}

/**
 * Keeps a cached render's output for `ttlSeconds` (docs/api.md, "Render cache"): under the prefix of
 * the lifecycle rule that deletes it a day after its entry expires at the latest (stacks/Storage.ts).
 */
export async function storeCachedOutput(body: Buffer, contentType: string, ttlSeconds: number): Promise<string> {
  const days = CACHE_RETENTION_DAYS.find((d) => ttlSeconds <= d * 86_400) ?? CACHE_RETENTION_DAYS.at(-1)!;
  const key = `${CACHE_PREFIX}d${days}/${randomUUID()}`;
  await s3.send(new PutObjectCommand({ Bucket: config.BUCKET_NAME, Key: key, Body: body, ContentType: contentType }));
  return key;
}

/** An object stored by storeAnswerBody or storeCachedOutput. */
export async function loadStored(key: string): Promise<Buffer> {
  const { Body } = await s3.send(new GetObjectCommand({ Bucket: config.BUCKET_NAME, Key: key }));
  return Buffer.from(await Body!.transformToByteArray());
}
