import { config } from "../config.js";
import type { Capture } from "../render/capture.js";
import { storeOutput } from "../storage/outputs.js";
import { binary, type HttpResponse, json, seeOther } from "./responses.js";

const EXTENSIONS = { png: "png", jpeg: "jpg", pdf: "pdf" } as const;

/**
 * The response for a finished capture: the bytes (binary) or docs/api.md's JSON envelope; above the
 * inline limit the output goes to S3 and the client gets a presigned link instead (303 or downloadUrl).
 */
export async function deliverCapture(capture: Capture, responseFormat: "binary" | "json"): Promise<HttpResponse> {
  const extension = EXTENSIONS[capture.format];
  const headers: Record<string, string> = { "X-Render-Ms": String(capture.renderMs) };
  if (capture.truncated) headers["X-Truncated"] = "true";
  const stored = capture.body.length > config.INLINE_LIMIT_BYTES ? await storeOutput(capture.body, capture.contentType, extension) : null;

  if (responseFormat === "binary") {
    if (stored) return seeOther(stored.url, headers);
    return binary(capture.body, capture.contentType, { ...headers, "Content-Disposition": `inline; filename="screenshot.${extension}"` });
  }
  return json(
    {
      ...(stored ? { downloadUrl: stored.url, expiresAt: stored.expiresAt } : { image: capture.body.toString("base64") }),
      format: capture.format,
      contentType: capture.contentType,
      width: capture.width,
      height: capture.height,
      bytes: capture.body.length,
      url: capture.url,
      title: capture.title,
      truncated: capture.truncated,
      renderMs: capture.renderMs,
    },
    200,
    headers,
  );
}
