// POST /api/v1/animate through the whole local stack, against fixture pages whose 50 px colour
// stripes say where each frame is scrolled to (dev/harness/animate-pages.ts). Each format decoded
// as a viewer would: video in this test's own Chromium through <video> (seeked to each frame, drawn,
// read) with its packets counted by mediabunny's reader; GIF and WebP by sharp. Frames are checked
// against the scroll plan (lib/render/animate/plan.ts), not against numbers written here.
import { setTimeout as sleep } from "node:timers/promises";
import { ALL_FORMATS, BufferSource, EncodedPacketSink, Input } from "mediabunny";
import puppeteer, { type Browser } from "puppeteer-core";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { STRIPE, stripeColour } from "../../dev/harness/animate-pages.js";
import { quietChromium } from "../../dev/harness/browser.js";
import { fundedKey } from "../../dev/harness/dev-process.js";
import { frameCount, scrollPositions } from "../../lib/render/animate/plan.js";
import { type ErrorBody, postJson } from "../helpers/api.js";
import { mcpClient } from "../helpers/mcp.js";

const base = inject("baseUrl");
const page = (name: string, query = "") => `${inject("fixtureUrl")}/animate/${name}${query}`;
const animate = (fields: Record<string, unknown>, headers?: Record<string, string>) => postJson("/api/v1/animate", fields, headers);
/** A small clip of the stripes page: 640x360 at 1x. */
const clip = (fields: Record<string, unknown> = {}) => ({ url: page("stripes"), width: 640, height: 360, ...fields });

type Column = [number, number, number][];

/** The stripe whose colour is nearest to `colour`. */
function stripeOf(colour: [number, number, number]): number {
  let best = 0;
  let distance = Number.POSITIVE_INFINITY;
  for (let k = 0; k < 80; k++) {
    const [r, g, b] = stripeColour(k);
    const d = (r - colour[0]) ** 2 + (g - colour[1]) ** 2 + (b - colour[2]) ** 2;
    if (d < distance) [best, distance] = [k, d];
  }
  return best;
}

/**
 * Where a frame is scrolled to (CSS px at 1x), from a column of its pixels: row r of a frame
 * scrolled to `top` shows stripe floor((top + r) / STRIPE), so each row's stripe bounds the top to
 * one stripe's span; the top is where the most rows agree (a row blurred by video coding at a
 * stripe's edge is outvoted).
 */
function topOf(column: Column): number {
  const votes = new Map<number, number>();
  column.forEach((colour, row) => {
    const first = stripeOf(colour) * STRIPE - row;
    for (let top = Math.max(0, first); top < first + STRIPE; top++) votes.set(top, (votes.get(top) ?? 0) + 1);
  });
  let best = 0;
  for (const [top, count] of votes) if (count > (votes.get(best) ?? 0)) best = top;
  return best;
}

let browser: Browser;
beforeAll(async () => {
  browser = await puppeteer.launch({ ...(await quietChromium()), pipe: true });
});
afterAll(async () => browser?.close());

/**
 * A video as this test's Chromium reads it: `<video>` loads it (its size and duration), and every
 * frame, demuxed by mediabunny's reader, is decoded by the browser's VideoDecoder and drawn (its
 * timestamp and column x = 5). Seeking a <video> to each frame was not exact: under load the frame
 * drawn after 'seeked' was sometimes its neighbour.
 */
async function watch(video: Buffer, type: string) {
  const input = new Input({ formats: ALL_FORMATS, source: new BufferSource(video) });
  const track = (await input.getPrimaryVideoTrack())!;
  const config = await track.getDecoderConfig();
  const chunks: { key: boolean; timestamp: number; duration: number; data: string }[] = [];
  for await (const packet of new EncodedPacketSink(track).packets())
    chunks.push({ key: packet.type === "key", timestamp: packet.timestamp, duration: packet.duration, data: Buffer.from(packet.data).toString("base64") });
  const description = config?.description ? Buffer.from(config.description as Uint8Array).toString("base64") : null;
  const tab = await browser.newPage();
  try {
    // VideoDecoder needs a secure context: a loopback page is one.
    await tab.goto(page("short"));
    const seen = (await tab.evaluate(
      `(async () => {
        const bytes = (text) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
        const video = document.createElement("video");
        video.muted = true;
        video.src = URL.createObjectURL(new Blob([bytes(${JSON.stringify(video.toString("base64"))})], { type: ${JSON.stringify(type)} }));
        await new Promise((done, fail) => { video.onloadeddata = done; video.onerror = () => fail(new Error("cannot play: " + (video.error && video.error.message))); });
        const canvas = new OffscreenCanvas(video.videoWidth, video.videoHeight);
        const context = canvas.getContext("2d", { willReadFrequently: true });
        const frames = [];
        let failure = null;
        const decoder = new VideoDecoder({
          output(frame) {
            context.drawImage(frame, 0, 0);
            const data = context.getImageData(5, 0, 1, canvas.height).data;
            const column = [];
            for (let i = 0; i < data.length; i += 4) column.push([data[i], data[i + 1], data[i + 2]]);
            frames.push({ timestamp: frame.timestamp, column });
            frame.close();
          },
          error(error) { failure = error; },
        });
        const description = ${JSON.stringify(description)};
        decoder.configure({ ...${JSON.stringify({ ...config, description: undefined })}, ...(description ? { description: bytes(description) } : {}) });
        for (const chunk of ${JSON.stringify(chunks)})
          decoder.decode(new EncodedVideoChunk({ type: chunk.key ? "key" : "delta", timestamp: Math.round(chunk.timestamp * 1e6), duration: Math.round(chunk.duration * 1e6), data: bytes(chunk.data) }));
        await decoder.flush();
        if (failure) throw failure;
        return { width: video.videoWidth, height: video.videoHeight, duration: video.duration, frames };
      })()`,
    )) as { width: number; height: number; duration: number; frames: { timestamp: number; column: Column }[] };
    return { ...seen, codec: track.codec, packets: chunks.length };
  } finally {
    await tab.close();
  }
}

/** An animated image's frames: size, each frame's delay and column x = 5. */
async function frames(file: Buffer) {
  const image = sharp(file, { animated: true });
  const { width, pageHeight, pages, delay } = await image.metadata();
  const { data, info } = await image.raw().toBuffer({ resolveWithObject: true });
  const columns: Column[] = Array.from({ length: pages! }, (_, f) =>
    Array.from({ length: pageHeight! }, (_, y) => {
      const i = ((f * pageHeight! + y) * width! + 5) * info.channels;
      return [data[i]!, data[i + 1]!, data[i + 2]!] as [number, number, number];
    }),
  );
  return { width: width!, height: pageHeight!, delay: delay!, columns };
}

/** An animated image as this test's Chromium decodes it (ImageDecoder): each frame's duration (ms) and column x = 5. */
async function decodedByChromium(file: Buffer, type: string): Promise<{ delay: number[]; columns: Column[] }> {
  const tab = await browser.newPage();
  try {
    // ImageDecoder needs a secure context: a loopback page is one.
    await tab.goto(page("short"));
    return (await tab.evaluate(
      `(async () => {
        const data = Uint8Array.from(atob(${JSON.stringify(file.toString("base64"))}), (c) => c.charCodeAt(0));
        const decoder = new ImageDecoder({ data, type: ${JSON.stringify(type)} });
        await decoder.tracks.ready;
        const count = decoder.tracks.selectedTrack.frameCount;
        const delay = [], columns = [];
        for (let i = 0; i < count; i++) {
          const { image } = await decoder.decode({ frameIndex: i });
          const canvas = new OffscreenCanvas(image.displayWidth, image.displayHeight);
          const context = canvas.getContext("2d");
          context.drawImage(image, 0, 0);
          const pixels = context.getImageData(5, 0, 1, image.displayHeight).data;
          columns.push(Array.from({ length: image.displayHeight }, (_, y) => [pixels[y * 4], pixels[y * 4 + 1], pixels[y * 4 + 2]]));
          delay.push(Math.round(image.duration / 1000));
          image.close();
        }
        return { delay, columns };
      })()`,
    )) as { delay: number[]; columns: Column[] };
  } finally {
    await tab.close();
  }
}

/** Each frame's top as it plays at `fps`: a frame written once for a hold is shown for as many frames as its delay lasts. */
const played = (read: { delay: number[]; columns: Column[] }, fps: number) =>
  read.columns.flatMap((column, i) => Array(Math.round((read.delay[i]! * fps) / 1000)).fill(topOf(column)) as number[]);

/** The tops the plan gives for `fields` on the stripes page scrolled to `target`. */
const planned = (fields: { duration: number; fps: number; easing?: string; holdStart?: number; holdEnd?: number; back?: boolean }, target: number) =>
  scrollPositions(
    {
      frames: frameCount(fields.duration, fields.fps),
      fps: fields.fps,
      easing: (fields.easing ?? "ease-in-out") as "linear",
      holdStartMs: fields.holdStart ?? 0,
      holdEndMs: fields.holdEnd ?? 0,
      back: fields.back ?? false,
    },
    target,
  );

describe("animate: each format", () => {
  // The stripes page is 4000 px: scrolled to its bottom, a 360 px viewport's top is at 3640.
  const bottom = 4000 - 360;

  it.each([
    ["mp4", "video/mp4", "avc"],
    ["webm", "video/webm", "vp9"],
  ] as const)(
    "%s: plays in <video> with the frames, size and length asked, each frame where the easing puts it",
    async (format, type, codec) => {
      const res = await animate(clip({ format, duration: 2, fps: 10 }));
      expect(res.status, await res.clone().text()).toBe(200);
      expect(res.headers.get("content-type")).toBe(type);
      expect(res.headers.get("x-frames")).toBe("20");
      expect(res.headers.get("x-duration-ms")).toBe("2000");
      expect(res.headers.get("x-charged-micro-usd")).toBe("20000");
      const shown = await watch(Buffer.from(await res.arrayBuffer()), type);
      expect(shown).toMatchObject({ width: 640, height: 360, codec, packets: 20 });
      expect(shown.duration).toBeCloseTo(2, 1);
      // Every frame, by its own timestamp, within a pixel or two of where the easing puts it; the first the top, the last the bottom.
      const tops = planned({ duration: 2, fps: 10 }, bottom);
      expect(shown.frames.map((f) => f.timestamp)).toEqual(tops.map((_, i) => i * 100_000));
      const seen = shown.frames.map((f) => topOf(f.column));
      expect(seen[0]).toBe(0);
      expect(Math.abs(seen.at(-1)! - bottom)).toBeLessThanOrEqual(2);
      for (const [i, top] of seen.entries()) expect(Math.abs(top - tops[i]!), `frame ${i}: ${top} vs ${tops[i]}`).toBeLessThanOrEqual(2);
    },
    60_000,
  );

  it.each(["gif", "webp"] as const)(
    "%s: the frames, delays and places asked, exactly",
    async (format) => {
      const res = await animate(clip({ format, duration: 2, fps: 6, scroll: { easing: "linear" } }));
      expect(res.status, await res.clone().text()).toBe(200);
      expect(res.headers.get("content-type")).toBe(`image/${format}`);
      const file = Buffer.from(await res.arrayBuffer());
      const read = await frames(file);
      expect([read.width, read.height]).toEqual([640, 360]);
      expect(read.columns.length).toBe(12);
      // GIF counts in hundredths: the whole is still the duration.
      expect(read.delay.reduce((a, b) => a + b, 0)).toBe(2000);
      expect(read.columns.map(topOf)).toEqual(planned({ duration: 2, fps: 6, easing: "linear" }, bottom));
      // A browser shows the same frames, for the same time.
      const shown = await decodedByChromium(file, `image/${format}`);
      expect(shown.delay).toEqual(read.delay);
      expect(shown.columns.map(topOf)).toEqual(read.columns.map(topOf));
    },
    60_000,
  );

  it("json: the envelope says the frames, their size, the length and where the scroll ended, with the file", async () => {
    const res = await animate(clip({ format: "gif", duration: 1, fps: 4, responseFormat: "json" }));
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      format: "gif",
      contentType: "image/gif",
      width: 640,
      height: 360,
      frames: 4,
      durationMs: 1000,
      scrolledTo: bottom,
      title: "animate",
    });
    expect((await frames(Buffer.from(body.image as string, "base64"))).columns.length).toBe(4);
  }, 60_000);
});

describe("animate: the scroll asked", () => {
  it("scroll.to a selector ends at its element's top; holds stay put; back returns to the top", async () => {
    const scroll = { to: "#stop", easing: "linear", holdStart: 500, holdEnd: 500, back: true };
    const res = await animate(clip({ format: "webp", duration: 3, fps: 4, scroll }));
    expect(res.status, await res.clone().text()).toBe(200);
    const seen = played(await frames(Buffer.from(await res.arrayBuffer())), 4);
    const tops = planned({ duration: 3, fps: 4, ...scroll }, 1500);
    expect(seen).toEqual(tops);
    expect(seen[0]).toBe(0);
    expect(seen).toContain(1500);
    expect(seen.at(-1)).toBe(0);
  }, 60_000);

  it("scroll.to a length stops there; a page shorter than the viewport is a still clip", async () => {
    const stopped = await animate(clip({ format: "gif", duration: 1, fps: 4, scroll: { to: 700 } }));
    expect((await frames(Buffer.from(await stopped.arrayBuffer()))).columns.map(topOf).at(-1)).toBe(700);
    const still = await animate({ url: page("short"), width: 640, height: 360, format: "gif", duration: 1, fps: 4 });
    expect(still.status).toBe(200);
    const read = await frames(Buffer.from(await still.arrayBuffer()));
    // Held frames are written once in a GIF: one frame shown for the whole second.
    expect(read.delay.reduce((a, b) => a + b, 0)).toBe(1000);
    expect(new Set(read.columns.map((c) => JSON.stringify(c))).size).toBe(1);
  }, 60_000);

  it("an element scroll.to names that is not there: 422, not charged", async () => {
    // The short page: nothing to settle but the element not found (under a loaded CI, settling the stripes once ran past the test stack's 5 s).
    const res = await animate({ url: page("short"), width: 640, height: 360, format: "gif", duration: 1, fps: 2, scroll: { to: "#nowhere" } });
    expect(res.status).toBe(422);
    expect(res.headers.get("x-charged-micro-usd")).toBe("0");
    expect(((await res.json()) as ErrorBody).error).toEqual({ code: "SELECTOR_NOT_FOUND", message: 'scroll.to: no element matches "#nowhere" on the page.' });
  }, 60_000);

  it("html instead of url renders the document", async () => {
    const html = await (await fetch(page("stripes", "?h=2000"))).text();
    const res = await animate({ html, width: 640, height: 360, format: "gif", duration: 1, fps: 3, scroll: { easing: "linear" } });
    expect(res.status, await res.clone().text()).toBe(200);
    expect((await frames(Buffer.from(await res.arrayBuffer()))).columns.map(topOf)).toEqual([0, 820, 1640]);
  }, 60_000);
});

// Pages that never settle, grow forever or block their thread: test/hostile/zoo.test.ts, on a stack of their own.
describe("animate: refusals before any work, and a page that reaches for the encoder", () => {
  it("what cannot be made at once is a 400 naming the limit, not charged: too many frames, live, holds that leave no time", async () => {
    for (const [fields, pattern] of [
      [{ format: "mp4", duration: 30, fps: 60, width: 1920, height: 1080 }, /more than an answer at once can make \(at most \d+ frames at this size\).*a job/],
      [
        { format: "gif", duration: 30, fps: 60, width: 1920, height: 1080 },
        /1800 frames of 1920x1080 as gif need about [\d,]+ MB to encode, more than the 768 MB/,
      ],
      [{ width: 3840, height: 2400, deviceScaleFactor: 2 }, /larger than 3840x2160/],
      [{ mode: "live" }, /mode: "live" runs only in a job/],
      [{ duration: 2, scroll: { holdStart: 1000, holdEnd: 1000 } }, /scroll\.holdEnd: with holdStart, must leave time to scroll/],
      [{ format: "mov" }, /format: must be one of "mp4", "webm", "gif", "webp"/],
      [{ duration: 31 }, /duration: must be a number from 1 to 30/],
      [{ fps: 61 }, /fps: must be an integer from 1 to 60/],
      [{ scroll: { to: "" } }, /scroll\.to/],
    ] as const) {
      const res = await animate(clip(fields));
      expect(res.status, JSON.stringify(fields)).toBe(400);
      expect(res.headers.get("x-charged-micro-usd") ?? "0").toBe("0");
      expect(((await res.json()) as ErrorBody).error.message).toMatch(pattern);
    }
  });

  it("the visited page cannot reach the encoder: its address, a frame of it, a channel by its name all fail", async () => {
    const res = await animate({ url: page("encoder"), width: 640, height: 360, format: "gif", duration: 1, fps: 2 });
    expect(res.status, await res.clone().text()).toBe(200);
    const read = await frames(Buffer.from(await res.arrayBuffer()));
    // The page paints its top red if any attempt got through.
    expect(read.columns[0]![10]).not.toEqual([255, 0, 0]);
    expect(stripeOf(read.columns[1]!.at(-1)!)).toBeGreaterThanOrEqual(0);
  }, 60_000);
});

describe("animate: prices, agents and jobs", () => {
  it("is quoted $0.02 by x402 and charged $0.02 to a key", async () => {
    const quote = await animate(clip(), {});
    expect(quote.status).toBe(402);
    const accepts = ((await quote.json()) as { accepts: { maxAmountRequired: string }[] }).accepts;
    expect(accepts[0]!.maxAmountRequired).toBe("20000");
    const key = await fundedKey(base, inject("localDir"), `animate-${Date.now()}@animate.test`, 1);
    const res = await animate(clip({ duration: 1, fps: 5 }), { authorization: `Bearer ${key}` });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-charged-micro-usd")).toBe("20000");
  }, 60_000);

  it("MCP: the animate tool answers a link to the file and what it holds", async () => {
    const client = await mcpClient(base, { authorization: `Bearer ${inject("apiKey")}` });
    try {
      const result = (await client.callTool({
        name: "animate",
        arguments: { url: page("stripes"), width: 640, height: 360, format: "gif", duration: 1, fps: 4 },
      })) as { isError?: boolean; structuredContent?: Record<string, unknown> };
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ format: "gif", frames: 4, width: 640, height: 360 });
      const file = Buffer.from(await (await fetch(result.structuredContent!.downloadUrl as string)).arrayBuffer());
      expect((await frames(file)).columns.length).toBe(4);
    } finally {
      await client.close();
    }
  }, 60_000);

  it("a job's GIF or WebP whose frames would not fit the worker's memory is refused at submit, naming it; nothing queued or charged", async () => {
    const auth = { authorization: `Bearer ${inject("apiKey")}` };
    // 30 s at 50 fps, 1280x720: inside a job's time, but 5.5 GB of frames where the worker has 2,048 MB.
    for (const [format, mode] of [
      ["webp", "synthetic"],
      ["gif", "synthetic"],
      ["gif", "live"],
    ] as const) {
      const item = { url: page("stripes"), width: 1280, height: 720, deviceScaleFactor: 1, format, mode, duration: 30, fps: 50 };
      const res = await postJson("/api/v1/jobs", { endpoint: "animate", items: [item] }, auth);
      expect(res.status, format).toBe(400);
      expect(((await res.json()) as ErrorBody).error.message).toMatch(
        new RegExp(`1500 frames of 1280x720 as ${format} need about [\\d,]+ MB to encode, more than the 768 MB`),
      );
    }
  }, 60_000);

  it("a live job: the page scrolled for real, a capture per frame, its frames where the plan puts them", async () => {
    const auth = { authorization: `Bearer ${inject("apiKey")}` };
    const item = { url: page("stripes"), width: 320, height: 200, format: "gif", mode: "live", duration: 1, fps: 5, scroll: { easing: "linear" } };
    const submitted = await postJson("/api/v1/jobs", { endpoint: "animate", items: [item] }, auth);
    expect(submitted.status, await submitted.clone().text()).toBe(202);
    const { id } = (await submitted.json()) as { id: string };
    let job: { status: string; items: { status: string; charged_micro_usd: number; result?: Record<string, unknown> }[] };
    const end = Date.now() + 90_000;
    do {
      await sleep(300);
      job = (await (await fetch(`${base}/api/v1/jobs/${id}`, { headers: auth })).json()) as typeof job;
    } while (job.status !== "completed" && Date.now() < end);
    expect(job.items[0]).toMatchObject({ status: "succeeded", charged_micro_usd: 20_000, result: { format: "gif", frames: 5, scrolledTo: 3800 } });
    const file = Buffer.from(await (await fetch(job.items[0]!.result!.downloadUrl as string)).arrayBuffer());
    expect((await frames(file)).columns.map(topOf)).toEqual(planned({ duration: 1, fps: 5, easing: "linear" }, 3800));
  }, 120_000);
});
