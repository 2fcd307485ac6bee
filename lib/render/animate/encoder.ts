import { BufferTarget, EncodedPacket, EncodedVideoPacketSource, Mp4OutputFormat, Output, WebMOutputFormat } from "mediabunny";
import type { HTTPRequest, Page } from "puppeteer-core";

// Video encoding in the browser (docs/api.md, "Animate"): Chromium's WebCodecs encoder (H.264 or
// VP9) in a page of the composer browser, never the visited page's: that page only ever gives up
// pixels (its captures), and nothing it runs can reach the encoder or what it writes. WebCodecs
// exists only in a secure context, so the encoder's document is served, by request interception, at
// an https address no network answers (.invalid); its frames come the same way, and every other
// request it might make is refused. The encoded chunks are muxed into MP4 or WebM in Node
// (mediabunny).

export type VideoFormat = "mp4" | "webm";

const ORIGIN = "https://encoder.shotline.invalid";

/**
 * The encoder's document: `encoder.open(config)`, then `encoder.add(imageUrl, crops)` for each
 * image (one tall capture cut into many frames, or a frame per image), then `encoder.close()`,
 * which answers the chunks, base64, with the decoder's description.
 */
const DOCUMENT = `<!doctype html><meta charset="utf-8"><title>encoder</title><script>
"use strict";
const base64 = (bytes) => {
  let text = "";
  for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  return btoa(text);
};
let video = null;
let failure = null;
let description = null;
const chunks = [];
window.encoder = {
  async open(config) {
    const support = await VideoEncoder.isConfigSupported(config);
    if (!support.supported) throw new Error("this browser cannot encode " + config.codec + " at " + config.width + "x" + config.height);
    video = new VideoEncoder({
      output(chunk, meta) {
        const data = new Uint8Array(chunk.byteLength);
        chunk.copyTo(data);
        chunks.push({ key: chunk.type === "key", timestamp: chunk.timestamp, duration: chunk.duration, data: base64(data) });
        if (meta && meta.decoderConfig && meta.decoderConfig.description && description === null)
          description = base64(ArrayBuffer.isView(meta.decoderConfig.description)
            ? new Uint8Array(meta.decoderConfig.description.buffer, meta.decoderConfig.description.byteOffset, meta.decoderConfig.description.byteLength)
            : new Uint8Array(meta.decoderConfig.description));
      },
      error(error) { failure = error; },
    });
    video.configure(config);
  },
  async add(url, crops) {
    const bitmap = await createImageBitmap(await (await fetch(url)).blob());
    try {
      for (const crop of crops) {
        if (failure) throw failure;
        const frame = new VideoFrame(bitmap, { timestamp: crop.timestamp, duration: crop.duration, visibleRect: { x: 0, y: crop.y, width: crop.width, height: crop.height } });
        video.encode(frame, { keyFrame: crop.key });
        frame.close();
        while (video.encodeQueueSize > 2) await new Promise((resolve) => video.addEventListener("dequeue", resolve, { once: true }));
      }
    } finally {
      bitmap.close();
    }
  },
  async close() {
    await video.flush();
    if (failure) throw failure;
    video.close();
    return { chunks, description };
  },
};
</script>`;

/** Images and the frames cut from each (their tops, device px), in the order the frames play. */
export type FrameImages = AsyncIterable<{ readonly png: Buffer; readonly tops: readonly number[] }>;

interface Encoded {
  readonly chunks: { key: boolean; timestamp: number; duration: number; data: string }[];
  readonly description: string | null;
}

/** A key frame every this many seconds: players seek to it, and a damaged stream recovers there. */
const KEY_FRAME_SECONDS = 2;

/** Bits per pixel of each frame: screen content scrolling (sharp text) needs more than camera video. */
const BITS_PER_PIXEL = 0.1;

/** H.264 levels by the macroblocks a frame may hold and a second may decode (ITU-T H.264 Table A-1). */
const AVC_LEVELS: readonly (readonly [level: number, frameMbs: number, mbsPerSecond: number])[] = [
  [0x1f, 3_600, 108_000],
  [0x20, 5_120, 216_000],
  [0x28, 8_192, 245_760],
  [0x2a, 8_704, 522_240],
  [0x32, 22_080, 589_824],
  [0x33, 36_864, 983_040],
  [0x34, 36_864, 2_073_600],
];

/** The codec string for `format` at this size and rate: H.264 High at the lowest level that holds it, or VP9 profile 0. */
function codecFor(format: VideoFormat, width: number, height: number, fps: number): string {
  if (format === "webm") return "vp09.00.10.08";
  const frameMbs = Math.ceil(width / 16) * Math.ceil(height / 16);
  const level = AVC_LEVELS.find(([, most, rate]) => frameMbs <= most && frameMbs * fps <= rate)?.[0] ?? 0x34;
  return `avc1.6400${level.toString(16).padStart(2, "0")}`;
}

/** The bitrate for frames of this size and rate (bit/s). */
const bitrateFor = (width: number, height: number, fps: number) => Math.round(Math.min(20e6, Math.max(300e3, width * height * fps * BITS_PER_PIXEL)));

/**
 * Opens the encoder's document in `page` (a fresh page of the composer browser) and answers a
 * function that serves `image` at a new address of it, for `encoder.add`.
 */
async function openEncoder(page: Page): Promise<(image: Buffer) => string> {
  const images = new Map<string, Buffer>();
  await page.setRequestInterception(true);
  page.on("request", (request: HTTPRequest) => {
    const url = request.url();
    const image = images.get(url);
    const answer =
      url === `${ORIGIN}/`
        ? request.respond({ status: 200, contentType: "text/html; charset=utf-8", body: DOCUMENT })
        : image
          ? request.respond({ status: 200, contentType: "image/png", body: image })
          : request.abort("blockedbyclient");
    if (image) images.delete(url);
    void answer.catch(() => undefined);
  });
  await page.goto(`${ORIGIN}/`, { waitUntil: "load" });
  let served = 0;
  return (image) => {
    const url = `${ORIGIN}/frames/${served++}.png`;
    images.set(url, image);
    return url;
  };
}

/** Encodes the frames of `images`, each `size` (device px), shown at `fps`, as `format` video in `page`, and muxes them. */
export async function encodeVideo(page: Page, format: VideoFormat, size: { width: number; height: number }, fps: number, images: FrameImages): Promise<Buffer> {
  const serve = await openEncoder(page);
  const codec = codecFor(format, size.width, size.height, fps);
  await page.evaluate(
    `encoder.open(${JSON.stringify({
      codec,
      width: size.width,
      height: size.height,
      bitrate: bitrateFor(size.width, size.height, fps),
      framerate: fps,
      latencyMode: "quality",
      ...(format === "mp4" ? { avc: { format: "avc" } } : {}),
    })})`,
  );
  const keyEvery = Math.max(1, Math.round(fps * KEY_FRAME_SECONDS));
  const at = (i: number) => Math.round((i * 1_000_000) / fps);
  let index = 0;
  for await (const { png, tops } of images) {
    const crops = tops.map((y) => {
      const i = index++;
      return { y, ...size, timestamp: at(i), duration: at(i + 1) - at(i), key: i % keyEvery === 0 };
    });
    await page.evaluate(`encoder.add(${JSON.stringify(serve(png))}, ${JSON.stringify(crops)})`);
  }
  const encoded = (await page.evaluate("encoder.close()")) as Encoded;
  return mux(format, codec, size, fps, encoded);
}

/** The encoded chunks in an MP4 or WebM file. */
async function mux(format: VideoFormat, codec: string, size: { width: number; height: number }, fps: number, encoded: Encoded): Promise<Buffer> {
  const output = new Output({
    format: format === "mp4" ? new Mp4OutputFormat({ fastStart: "in-memory" }) : new WebMOutputFormat(),
    target: new BufferTarget(),
  });
  const source = new EncodedVideoPacketSource(format === "mp4" ? "avc" : "vp9");
  output.addVideoTrack(source, { frameRate: fps });
  await output.start();
  const description = encoded.description === null ? undefined : Buffer.from(encoded.description, "base64");
  let first = true;
  for (const chunk of encoded.chunks) {
    const packet = new EncodedPacket(Buffer.from(chunk.data, "base64"), chunk.key ? "key" : "delta", chunk.timestamp / 1e6, chunk.duration / 1e6);
    await source.add(
      packet,
      first ? { decoderConfig: { codec, codedWidth: size.width, codedHeight: size.height, ...(description ? { description } : {}) } } : undefined,
    );
    first = false;
  }
  await output.finalize();
  return Buffer.from(output.target.buffer!);
}
