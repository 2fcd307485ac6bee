import { randomUUID } from "node:crypto";
import { GetObjectCommand, HeadObjectCommand, NotFound, PutObjectCommand } from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { config } from "../config.js";
import { log } from "../log.js";
import { CACHE_PREFIX, CACHE_RETENTION_DAYS } from "../packaging.js";
import { s3 } from "./s3.js";

/** A presigned link to a stored output, and until when it works. */
export interface OutputLink {
  readonly url: string;
  readonly expiresAt: string;
}

/** Stored outputs' keys: `outputs/<day>/<uuid>.<extension>`. */
export const OUTPUT_KEY =
  /^outputs\/(\d{4}-\d{2}-\d{2})\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.(?:png|jpg|webp|avif|pdf|gif|mp4|webm|har|json))$/;

/**
 * Stores an output too large to return inline (Lambda responses cap at 6 MB, base64 inflates by a
 * third), one an MCP tool links to, or a render's log (named `name`); returns its key. The bucket's lifecycle rule deletes it after a day.
 */
export async function storeOutput(body: Buffer, contentType: string, extension: string, name = "screenshot"): Promise<string> {
  const key = `outputs/${new Date().toISOString().slice(0, 10)}/${randomUUID()}.${extension}`;
  await s3.send(
    new PutObjectCommand({
      Bucket: config.BUCKET_NAME,
      Key: key,
      Body: body,
      ContentType: contentType,
      ContentDisposition: `inline; filename="${name}.${extension}"`,
    }),
  );
  return key;
}

/** A presigned GET link to the object `key`, for `seconds`. */
const presigned = (key: string, seconds: number) => getSignedUrl(s3, new GetObjectCommand({ Bucket: config.BUCKET_NAME, Key: key }), { expiresIn: seconds });

/** The link a large output's answer carries: presigned for DOWNLOAD_LINK_SECONDS. */
export async function downloadLink(key: string): Promise<OutputLink> {
  const expiresIn = config.DOWNLOAD_LINK_SECONDS;
  return { url: await presigned(key, expiresIn), expiresAt: new Date(Date.now() + expiresIn * 1000).toISOString() };
}

/**
 * A presigned link to the stored output `key` for `seconds`, or null when it is no longer stored.
 * S3 answers a HEAD of a missing key 404 to a role that may list the bucket, and a bodiless 403
 * (which the SDK names `Unknown`, not `AccessDenied`) to one that may not: both mean it is not
 * there for us (the stack grants s3:ListBucket, so a 403 is a deployment that lost it).
 */
export async function linkToOutput(key: string, seconds: number): Promise<string | null> {
  try {
    await s3.send(new HeadObjectCommand({ Bucket: config.BUCKET_NAME, Key: key }));
  } catch (error) {
    if (error instanceof NotFound) return null;
    if ((error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 403) {
      log.warn("S3 answered 403 to a HEAD: the key is missing and the role may not list the bucket (s3:ListBucket)", { key });
      return null;
    }
    throw error;
  }
  return presigned(key, seconds);
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
