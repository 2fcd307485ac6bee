import { DeleteObjectsCommand } from "@aws-sdk/client-s3";
import { config } from "../config.js";
import { describeError, log } from "../log.js";
import { downloadLink } from "../storage/outputs.js";
import { s3 } from "../storage/s3.js";
import type { Check } from "./store.js";

// A monitor's stored images and text in the bucket (docs/api.md, "Monitors"), as the API reaches
// them without running a check: links to a check's images, and deleting what a monitor no longer needs.

/** Presigned links to a check's images (for DOWNLOAD_LINK_SECONDS; GET .../checks signs new ones). */
export async function imageLinks(images: NonNullable<Check["images"]>) {
  const links = await Promise.all(Object.entries(images).map(async ([name, key]) => [`${name}Url`, key ? (await downloadLink(key)).url : undefined] as const));
  return Object.fromEntries(links.filter(([, url]) => url !== undefined));
}

/** Deletes stored objects (a replaced baseline, a deleted monitor's), best effort: what is left is only storage. */
export async function deleteObjects(keys: readonly (string | undefined)[]): Promise<void> {
  const objects = keys.filter((key): key is string => key !== undefined).map((Key) => ({ Key }));
  if (!objects.length) return;
  await s3
    .send(new DeleteObjectsCommand({ Bucket: config.BUCKET_NAME, Delete: { Objects: objects, Quiet: true } }))
    .catch((error: unknown) => log.warn("stored objects not deleted", { keys, error: describeError(error) }));
}
