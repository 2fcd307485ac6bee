// Animations in `npm run bench`, through the whole local stack with an API key, on the stripes
// fixture (dev/harness/animate-pages.ts, 4000 px): a synthetic 5 s, 30 fps, 1280x720 MP4
// alternating with a full-page screenshot of the same page at 1x (what one tall capture costs).
// Ratio animate_vs_screenshot (p50 over p50; goal <= 2.5). Then one clip of each format at its
// default rate: its time and its bytes per second of animation.
import { type Sample, stats } from "./stats.js";

const FORMATS = ["mp4", "webm", "gif", "webp"] as const;

export async function benchAnimate(options: { fixturesUrl: string; serviceUrl: string; apiKey: string; rounds: number }) {
  const url = `${options.fixturesUrl}/animate/stripes`;
  const post = async (path: string, body: Record<string, unknown>) => {
    const started = performance.now();
    const res = await fetch(`${options.serviceUrl}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${options.apiKey}` },
      body: JSON.stringify(body),
    });
    const bytes = (await res.arrayBuffer()).byteLength;
    if (res.status !== 200) throw new Error(`animate bench: ${path} answered ${res.status}`);
    return { ms: performance.now() - started, bytes };
  };
  const mp4 = { url, format: "mp4", width: 1280, height: 720, duration: 5, fps: 30 };
  const screenshot = { url, width: 1280, height: 720, deviceScaleFactor: 1, fullPage: true };
  await post("/api/v1/animate", mp4);
  const samples: Record<"animate" | "screenshot", Sample> = { animate: [], screenshot: [] };
  for (let round = 0; round < Math.max(3, Math.round(options.rounds / 4)); round++) {
    samples.animate.push((await post("/api/v1/animate", mp4)).ms);
    samples.screenshot.push((await post("/api/v1/screenshot", screenshot)).ms);
  }
  const formats: Record<string, { ms: number; bytes_per_second: number }> = {};
  for (const format of FORMATS) {
    const made = await post("/api/v1/animate", { url, format, width: 1280, height: 720, duration: 5 });
    formats[format] = { ms: Math.round(made.ms), bytes_per_second: Math.round(made.bytes / 5) };
  }
  const results = { animate: stats(samples.animate), screenshot: stats(samples.screenshot), formats };
  const ratios = { animate_vs_screenshot: Number((results.animate.p50_ms / results.screenshot.p50_ms).toFixed(3)) };
  const print = () =>
    console.log(
      `animate: 5 s 30 fps 1280x720 MP4 p50 ${results.animate.p50_ms} ms, full-page screenshot ${results.screenshot.p50_ms} ms: animate_vs_screenshot ${ratios.animate_vs_screenshot} (goal <= 2.5); 5 s at 1280x720 by format (default fps): ${FORMATS.map((f) => `${f} ${formats[f]!.ms} ms, ${Math.round(formats[f]!.bytes_per_second / 1024)} KiB/s`).join("; ")}`,
    );
  return { results, ratios, print };
}
