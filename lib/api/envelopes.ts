// What an answer says of its output, whether a request gets it now (lib/http) or a job's item
// keeps it (lib/jobs): docs/api.md's JSON envelope, the file extension, and the logs' files.
import type { Animation } from "../render/animate/animate.js";
import type { Capture } from "../render/capture.js";
import type { PageLogs } from "../render/page-log.js";

export const EXTENSIONS = { png: "png", jpeg: "jpg", webp: "webp", avif: "avif", pdf: "pdf", gif: "gif", mp4: "mp4", webm: "webm" } as const;

/** A render's logs (docs/api.md, "What the page did"). */
type LogKind = "har" | "console" | "network";

/** How each log is stored and named: its file, the header that links it, and what the envelope says of it besides the link. */
const LOG_FILES: Record<LogKind, { name: string; extension: string; header: string; summary: (logs: Required<PageLogs>) => Record<string, number> }> = {
  har: { name: "page", extension: "har", header: "X-Har-Url", summary: (logs) => ({ entries: logs.har.log.entries.length }) },
  console: {
    name: "console",
    extension: "json",
    header: "X-Console-Url",
    summary: (logs) => ({ messages: logs.console.messages.length, errors: logs.console.messages.filter((m) => m.type === "error").length }),
  },
  network: { name: "network", extension: "json", header: "X-Network-Url", summary: (logs) => ({ failures: logs.network.failures.length }) },
};

/** Each log a render recorded: its kind, its bytes, how its file is named, and what an answer says of it. */
export function logFiles(logs: PageLogs | undefined) {
  return (Object.keys(LOG_FILES) as LogKind[])
    .filter((kind) => logs?.[kind] !== undefined)
    .map((kind) => {
      const { name, extension, header, summary } = LOG_FILES[kind];
      return { kind, body: Buffer.from(JSON.stringify(logs![kind])), file: { name, extension }, header, summary: summary(logs as Required<PageLogs>) };
    });
}

/** What docs/api.md's JSON envelope says of an animation, besides its bytes. */
export function animationEnvelopeOf(animation: Animation) {
  return {
    format: animation.format,
    contentType: animation.contentType,
    width: animation.width,
    height: animation.height,
    frames: animation.frames,
    durationMs: animation.durationMs,
    scrolledTo: animation.scrolledTo,
    bytes: animation.body.length,
    url: animation.url,
    title: animation.title,
    ...(animation.incomplete ? { incomplete: animation.incomplete } : {}),
    ...(animation.geo ? { geo: animation.geo } : {}),
    renderMs: animation.renderMs,
  };
}

/** What docs/api.md's JSON envelope says of a capture, besides its bytes. */
export function envelopeOf(capture: Capture) {
  return {
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
    ...(capture.incomplete ? { incomplete: capture.incomplete } : {}),
    ...(capture.geo ? { geo: capture.geo } : {}),
    renderMs: capture.renderMs,
  };
}
