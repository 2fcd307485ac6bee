import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  PutObjectCommand,
  UploadPartCommand,
} from "@aws-sdk/client-s3";
import { config } from "../config.js";
import { sendOwnEvent } from "../jobs/events.js";
import { JOBS_PREFIX } from "../packaging.js";
import { s3 } from "../storage/s3.js";
import { type Crawl, crawlHooks, getCrawl, listPages, noteResult } from "./store.js";

// A crawl's whole result as one download (docs/crawl.md, "Crawl"): every delivered page's output,
// one JSON object a line (NDJSON), written once the crawl has ended by a jobs worker (a message the
// crawl's end queues: lib/crawl/store.ts, wrapUp), streamed to the bucket in parts so that a worker
// holds one part at a time, whatever the crawl's size.

/** A multipart upload's part (S3 takes 5 MiB at least, but the last). */
const PART_BYTES = 8 * 1024 * 1024;
/** Page outputs read at once. */
const READS = 16;

const resultKey = (crawlId: string) => `${JOBS_PREFIX}${crawlId}/crawl.ndjson`;

/** The outputs of `crawl`'s delivered pages, in key order, `READS` fetched at a time. */
async function* outputs(crawl: Crawl): AsyncGenerator<string> {
  let cursor: string | undefined;
  do {
    const { pages, next } = await listPages(crawl.id, 100, cursor);
    const keys = pages.filter((page) => page.status === "delivered" && page.outputKey).map((page) => page.outputKey!);
    for (let start = 0; start < keys.length; start += READS) {
      const read = await Promise.all(
        keys.slice(start, start + READS).map(async (key) => {
          const { Body } = await s3.send(new GetObjectCommand({ Bucket: config.BUCKET_NAME, Key: key }));
          return Body!.transformToString("utf8");
        }),
      );
      yield* read;
    }
    cursor = next ?? undefined;
  } while (cursor);
}

/**
 * Announces ended crawl `crawl`'s end to its webhook, if it has one, once its result can be
 * downloaded: `crawl.completed` (a cancelled crawl's too), kept once however often it is sent.
 */
const announceEnd = (crawl: Crawl) =>
  sendOwnEvent(crawlHooks(crawl), `${crawl.id}.completed`, "crawl.completed", {
    crawl_id: crawl.id,
    status: crawl.status,
    counts: { discovered: crawl.discovered, delivered: crawl.delivered, failed: crawl.failed, skipped: crawl.skipped },
    charged_micro_usd: crawl.charged,
  });

/**
 * Writes ended crawl `crawlId`'s result, once (a second message finds it written): small, in one
 * PUT; larger, in parts; then announces its end. Returns its key, or null when the crawl is gone or
 * still runs.
 */
export async function writeResult(crawlId: string): Promise<string | null> {
  const crawl = await getCrawl(crawlId);
  if (!crawl || crawl.status === "running") return null;
  if (crawl.resultKey) {
    // Written by a worker that stopped before announcing it.
    await announceEnd(crawl);
    return crawl.resultKey;
  }
  const Key = resultKey(crawl.id);
  const target = { Bucket: config.BUCKET_NAME, Key };
  let upload: string | undefined;
  const parts: { PartNumber: number; ETag: string }[] = [];
  let buffered: Buffer[] = [];
  let size = 0;
  const flush = async () => {
    upload ??= (await s3.send(new CreateMultipartUploadCommand({ ...target, ContentType: "application/x-ndjson" }))).UploadId!;
    const PartNumber = parts.length + 1;
    const { ETag } = await s3.send(new UploadPartCommand({ ...target, UploadId: upload, PartNumber, Body: Buffer.concat(buffered, size) }));
    parts.push({ PartNumber, ETag: ETag! });
    buffered = [];
    size = 0;
  };
  try {
    for await (const line of outputs(crawl)) {
      const bytes = Buffer.from(`${line}\n`);
      buffered.push(bytes);
      size += bytes.length;
      if (size >= PART_BYTES) await flush();
    }
    if (upload) {
      if (size) await flush();
      await s3.send(new CompleteMultipartUploadCommand({ ...target, UploadId: upload, MultipartUpload: { Parts: parts } }));
    } else await s3.send(new PutObjectCommand({ ...target, Body: Buffer.concat(buffered, size), ContentType: "application/x-ndjson" }));
  } catch (error) {
    if (upload) await s3.send(new AbortMultipartUploadCommand({ ...target, UploadId: upload })).catch(() => undefined);
    throw error;
  }
  await noteResult(crawl.id, Key);
  await announceEnd(crawl);
  return Key;
}
