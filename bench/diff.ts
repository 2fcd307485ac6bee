// The visual diff of monitors (lib/monitors/diff.ts) in `npm run bench`: two full-page captures,
// 1280 px wide and about 5000 tall, of an article of 60 paragraphs, the second with a paragraph
// inserted near the top, rendered through the local stack (html-to-screenshot, PNG at 1x) and
// diffed (p50 of 9; goal < 300 ms), next to what a pixel-by-pixel comparison in place would call
// changed (everything below the insertion moved).
import sharp from "sharp";
import { type RawImage, visualDiff } from "../lib/monitors/diff.js";
import { stats } from "./stats.js";

const WORDS = "the quick brown fox jumps over a lazy dog while seven wizards quietly judge boxing matches near".split(" ");
const paragraph = (i: number) => `<p>${Array.from({ length: 60 }, (_, w) => WORDS[(i * 7 + w * 3) % WORDS.length]).join(" ")} (paragraph ${i}).</p>`;
const article = (inserted: boolean) =>
  `<body style="margin:0;padding:40px 160px;font:18px/1.6 sans-serif;color:#222"><h1>An article</h1>${Array.from({ length: 60 }, (_, i) => (inserted && i === 2 ? `<p><b>A paragraph added later.</b></p>${paragraph(i)}` : paragraph(i))).join("")}</body>`;

export async function benchDiff(options: { serviceUrl: string; apiKey: string }) {
  const capture = async (inserted: boolean): Promise<RawImage> => {
    const res = await fetch(`${options.serviceUrl}/api/v1/html-to-screenshot`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${options.apiKey}` },
      body: JSON.stringify({ html: article(inserted), width: 1280, height: 800, deviceScaleFactor: 1, fullPage: true }),
    });
    if (res.status !== 200) throw new Error(`diff bench: ${res.status}`);
    const { data, info } = await sharp(Buffer.from(await res.arrayBuffer()))
      .ensureAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
    return { data, width: info.width, height: info.height };
  };
  const [before, after] = [await capture(false), await capture(true)];
  const samples: number[] = [];
  let diff = visualDiff(before, after);
  for (let round = 0; round < 9; round++) {
    const started = performance.now();
    diff = visualDiff(before, after);
    samples.push(performance.now() - started);
  }
  // In place, pixel by pixel, as a plain diff compares.
  let moved = 0;
  const rows = Math.min(before.height, after.height);
  for (let i = 0; i < rows * after.width * 4; i += 4) if (before.data.readUInt32LE(i) !== after.data.readUInt32LE(i)) moved++;
  const results = {
    size: `${after.width}x${before.height}/${after.height}`,
    diff: stats(samples),
    changed_percent: diff.changedPercent,
    boxes: diff.boxes,
    in_place_changed_percent: Math.round((moved / (after.width * after.height)) * 100_000) / 1000,
  };
  const print = () =>
    console.log(
      `monitor diff: ${results.size} px, diff_ms p50 ${results.diff.p50_ms} (goal < 300); changed ${results.changed_percent}% in ${diff.boxes.length} box(es) (${JSON.stringify(diff.boxes)}), where a comparison in place calls ${results.in_place_changed_percent}% changed`,
    );
  return { results, print };
}
