import { config } from "../config.js";
import type { Capture } from "../render/capture.js";
import { storeOutput } from "../storage/outputs.js";
import { binary, type HttpResponse, json, seeOther } from "./responses.js";

const EXTENSIONS = { png: "png", jpeg: "jpg", webp: "webp", avif: "avif", pdf: "pdf" } as const;

/**
 * The largest answer returned inline, measured as sent (binary bodies travel base64-encoded, a
 * third larger): Lambda refuses responses over 6 MB, so an answer above this goes through S3.
 */
const MAX_INLINE_ANSWER_BYTES = 5_500_000;

/**
 * The response for a finished capture: the bytes (binary) or docs/api.md's JSON envelope. An
 * output above INLINE_LIMIT_BYTES, or an answer that would be larger than MAX_INLINE_ANSWER_BYTES
 * as sent, goes to S3 and the client gets a presigned link instead (303, or downloadUrl).
 */
export async function deliverCapture(capture: Capture, responseFormat: "binary" | "json"): Promise<HttpResponse> {
  const extension = EXTENSIONS[capture.format];
  const headers: Record<string, string> = { "X-Render-Ms": String(capture.renderMs) };
  if (capture.truncated) headers["X-Truncated"] = "true";
  const store = () => storeOutput(capture.body, capture.contentType, extension);
  const base64Bytes = Math.ceil(capture.body.length / 3) * 4;
  const fitsInline = capture.body.length <= config.INLINE_LIMIT_BYTES && base64Bytes <= MAX_INLINE_ANSWER_BYTES;

  if (responseFormat === "binary") {
    if (!fitsInline) return seeOther((await store()).url, headers);
    return binary(capture.body, capture.contentType, { ...headers, "Content-Disposition": `inline; filename="screenshot.${extension}"` });
  }
  const envelope = {
    format: capture.format,
    contentType: capture.contentType,
    width: capture.width,
    height: capture.height,
    ...(capture.pages !== undefined ? { pages: capture.pages } : {}),
    bytes: capture.body.length,
    url: capture.url,
    title: capture.title,
    truncated: capture.truncated,
    ...(capture.clip ? { clip: capture.clip } : {}),
    renderMs: capture.renderMs,
  };
  // The envelope is measured as serialised, with the image it would carry.
  if (fitsInline && Buffer.byteLength(JSON.stringify(envelope)) + base64Bytes + 16 <= MAX_INLINE_ANSWER_BYTES) {
    return json({ image: capture.body.toString("base64"), ...envelope }, 200, headers);
  }
  const stored = await store();
  return json({ downloadUrl: stored.url, expiresAt: stored.expiresAt, ...envelope }, 200, headers);
}
