import { animationEnvelopeOf, EXTENSIONS, envelopeOf, logFiles } from "../api/envelopes.js";
import { config } from "../config.js";
import { OUTPUT_RETENTION_DAYS } from "../packaging.js";
import type { Animation } from "../render/animate/animate.js";
import type { Capture } from "../render/capture.js";
import { previewOf } from "../render/encode.js";
import type { Geo } from "../render/geo.js";
import type { PageLogs } from "../render/page-log.js";
import { routeById } from "../routes.js";
import { downloadLink, OUTPUT_KEY, type OutputLink, storeOutput } from "../storage/outputs.js";
import { binary, type HttpResponse, json, seeOther } from "./responses.js";

/**
 * The largest answer returned inline, measured as sent (binary bodies travel base64-encoded, a
 * third larger): Lambda refuses responses over 6 MB, so an answer above this goes through S3.
 */
const MAX_INLINE_ANSWER_BYTES = 5_500_000;

/** A finished output as an answer carries it: its bytes, what they are, and what its headers say. */
interface Output {
  readonly body: Buffer;
  readonly contentType: string;
  readonly format: keyof typeof EXTENSIONS;
  readonly headers: Record<string, string>;
  /** docs/api.md's JSON envelope, besides the bytes. */
  readonly envelope: object;
}

/**
 * The response for a finished output: the bytes (binary) or the JSON envelope. An output above
 * INLINE_LIMIT_BYTES, or an answer that would be larger than MAX_INLINE_ANSWER_BYTES as sent, goes
 * to S3 and the client gets a presigned link instead (303, or downloadUrl).
 */
async function deliverOutput(output: Output, responseFormat: "binary" | "json", publicFor: number | undefined): Promise<HttpResponse> {
  const { body, contentType, headers, envelope } = output;
  const extension = EXTENSIONS[output.format];
  const store = async () => downloadLink(await storeOutput(body, contentType, extension));
  const base64Bytes = Math.ceil(body.length / 3) * 4;
  const fitsInline = body.length <= config.INLINE_LIMIT_BYTES && base64Bytes <= MAX_INLINE_ANSWER_BYTES;
  // Only a signed link's answer says who may keep it; the others leave it to the route's row.
  const caching = (linked: boolean) => (publicFor === undefined ? headers : { ...headers, "Cache-Control": cacheControl(publicFor, linked) });

  if (responseFormat === "binary") {
    if (!fitsInline) return seeOther((await store()).url, caching(true));
    return binary(body, contentType, { ...caching(false), "Content-Disposition": `inline; filename="screenshot.${extension}"` });
  }
  // The envelope is measured as serialised, with the image it would carry.
  if (fitsInline && Buffer.byteLength(JSON.stringify(envelope)) + base64Bytes + 16 <= MAX_INLINE_ANSWER_BYTES) {
    return json({ image: body.toString("base64"), ...envelope }, 200, caching(false));
  }
  const stored = await store();
  return json({ downloadUrl: stored.url, expiresAt: stored.expiresAt, ...envelope }, 200, caching(true));
}

/** The response for a finished capture (deliverOutput), with what its headers say of it, and links to its logs. */
export async function deliverCapture(
  capture: Capture,
  responseFormat: "binary" | "json",
  extraHeaders: Record<string, string> = {},
  { publicFor }: { publicFor?: number } = {},
): Promise<HttpResponse> {
  const headers: Record<string, string> = { "X-Render-Ms": String(capture.renderMs), ...extraHeaders };
  if (capture.truncated) headers["X-Truncated"] = "true";
  Object.assign(headers, pageHeaders(capture));
  const logs = await linkLogs(capture.logs, presignedLog);
  return deliverOutput(
    { ...capture, headers: { ...headers, ...logs.headers }, envelope: { ...envelopeOf(capture), ...logs.fields } },
    responseFormat,
    publicFor,
  );
}

/** The response for a finished animation (deliverOutput): its frames and length in headers too. */
export async function deliverAnimation(animation: Animation, responseFormat: "binary" | "json"): Promise<HttpResponse> {
  const logs = await linkLogs(animation.logs, presignedLog);
  const headers = {
    "X-Render-Ms": String(animation.renderMs),
    "X-Frames": String(animation.frames),
    "X-Duration-Ms": String(animation.durationMs),
    ...pageHeaders(animation),
    ...logs.headers,
  };
  return deliverOutput({ ...animation, headers, envelope: { ...animationEnvelopeOf(animation), ...logs.fields } }, responseFormat, undefined);
}

/** A log stored: its link, and until when it works. */
export type StoreLog = (body: Buffer, file: { name: string; extension: string }) => Promise<OutputLink>;

/** Stores a log as an output (kept a day), linked by a presigned link. */
export const presignedLog: StoreLog = async (body, { name, extension }) => downloadLink(await storeOutput(body, "application/json", extension, name));

/**
 * Stores each log a render recorded with `store`: the headers that link them (X-Har-Url...) and the
 * envelope's fields (`har: { url, expiresAt, entries }`, ...). Nothing when none was asked.
 */
export async function linkLogs(logs: PageLogs | undefined, store: StoreLog): Promise<{ headers: Record<string, string>; fields: Record<string, object> }> {
  const linked = await Promise.all(
    logFiles(logs).map(async ({ kind, body, file, header, summary }) => ({ kind, header, summary, link: await store(body, file) })),
  );
  return {
    headers: Object.fromEntries(linked.map(({ header, link }) => [header, link.url])),
    fields: Object.fromEntries(linked.map(({ kind, link, summary }) => [kind, { url: link.url, expiresAt: link.expiresAt, ...summary }])),
  };
}

/** A content snapshot's screenshot (lib/http/content.ts): the JSON envelope with a presigned link to the output, whatever its size. */
export async function deliverSnapshot(capture: Capture) {
  const extension = EXTENSIONS[capture.format];
  const stored = await downloadLink(await storeOutput(capture.body, capture.contentType, extension));
  return { downloadUrl: stored.url, expiresAt: stored.expiresAt, ...envelopeOf(capture) };
}

/** A kept answer's presigned link must still work this long after the answer is last served from a cache. */
const LINK_MARGIN_SECONDS = 300;

/**
 * Cache-Control for an answer others may keep for `publicFor` seconds (a signed link's cacheTtl; 0:
 * nobody keeps it). An answer that holds a presigned link (a 303, a downloadUrl) is kept no longer
 * than the link lives, less a margin: a cache must never serve a link that is dead.
 */
function cacheControl(publicFor: number, linked: boolean): string {
  const seconds = linked ? Math.min(publicFor, config.DOWNLOAD_LINK_SECONDS - LINK_MARGIN_SECONDS) : publicFor;
  if (seconds <= 0) return "private, no-store";
  return linked ? `public, max-age=${seconds}` : `public, max-age=${seconds}, immutable`;
}

/**
 * The headers that say how the page was seen: as it stood at the page-load limit
 * (X-Capture-Incomplete), and as a visitor of the country `geo: "auto"` found, and where it found it
 * (X-Geo-Country, X-Geo-Source).
 */
export const pageHeaders = ({ incomplete, geo }: { incomplete: string | null; geo?: Geo | undefined }): Record<string, string> => ({
  ...(incomplete ? { "X-Capture-Incomplete": incomplete } : {}),
  ...(geo ? { "X-Geo-Country": geo.country ?? "unknown", "X-Geo-Source": geo.source } : {}),
});

/**
 * The answer of an MCP screenshot tool (lib/mcp): the envelope with a link to the full output, and,
 * for an image, a preview sized for a model (lib/render/encode.ts), made while the output uploads.
 * The link is on the service's own `origin` (functions/output.ts) and redirects to storage: an MCP
 * client that sends its Authorization header with every request it makes (S3 refuses two kinds of
 * credentials, and the key would reach a third party) loses it on the redirect, as HTTP clients do.
 * It works as long as the output is kept.
 */
export async function deliverForTool(capture: Capture, origin: string, extraHeaders: Record<string, string> = {}): Promise<HttpResponse> {
  const [link, preview, logs] = await Promise.all([
    toolLink(capture, origin),
    capture.format === "pdf" ? null : previewOf(capture.body, capture.width, capture.height),
    linkLogs(capture.logs, toolLog(origin)),
  ]);
  const shown = preview && { mimeType: "image/jpeg", data: preview.data.toString("base64"), width: preview.width, height: preview.height };
  return json({ ...link, ...envelopeOf(capture), ...logs.fields, preview: shown }, 200, {
    "X-Render-Ms": String(capture.renderMs),
    ...pageHeaders(capture),
    ...extraHeaders,
  });
}

/** The answer of the MCP animate tool: the envelope with a link to the file, as deliverForTool's (no preview: a model reads no video). */
export async function deliverAnimationForTool(animation: Animation, origin: string): Promise<HttpResponse> {
  const [link, logs] = await Promise.all([toolLink(animation, origin), linkLogs(animation.logs, toolLog(origin))]);
  return json({ ...link, ...animationEnvelopeOf(animation), ...logs.fields, preview: null }, 200, {
    "X-Render-Ms": String(animation.renderMs),
    ...pageHeaders(animation),
  });
}

/** An output stored, and its link on the service's own `origin` (functions/output.ts), working as long as the output is kept. */
async function toolLink(output: Pick<Output, "body" | "contentType" | "format">, origin: string) {
  const { url, expiresAt } = originLink(await storeOutput(output.body, output.contentType, EXTENSIONS[output.format]), origin);
  return { downloadUrl: url, expiresAt };
}

/** A log stored as toolLink stores an output, for an MCP tool's answer. */
const toolLog =
  (origin: string): StoreLog =>
  async (body, { name, extension }) =>
    originLink(await storeOutput(body, "application/json", extension, name), origin);

/** The link to stored output `key` on the service's own `origin`. */
function originLink(key: string, origin: string): OutputLink {
  const [, day, file] = OUTPUT_KEY.exec(key)!;
  const url = `${origin}${routeById("output").path.replace("{day}", day!).replace("{file}", file!)}`;
  return { url, expiresAt: new Date(Date.now() + OUTPUT_RETENTION_DAYS * 86_400_000).toISOString() };
}

/** A render request's capture options: everything but how its answer is delivered and cached. */
export const captureOptionsOf = <T extends { responseFormat: unknown; cacheTtl: unknown; cacheKey?: unknown }>(
  request: T,
): Omit<T, "responseFormat" | "cacheTtl" | "cacheKey"> => {
  const { responseFormat: _, cacheTtl: __, cacheKey: ___, ...options } = request;
  return options;
};
