// Monitors in `npm run bench`. The visual diff (lib/monitors/diff.ts): two full-page captures,
// 1280 px wide and about 5000 tall, of an article of 60 paragraphs, the second with a paragraph
// inserted near the top, rendered through the local stack (html-to-screenshot, PNG at 1x) and
// diffed (p50 of 9; goal < 300 ms), next to what a pixel-by-pixel comparison in place would call
// changed (everything below the insertion moved). A whole check (monitor_check_vs_screenshot,
// goal <= 1.3): a visual monitor of a fixture article checked now, its time from the worker taking
// it to its end (capture, the baseline read back and diffed, the check kept), against a plain
// screenshot of the same page with the same options through /screenshot, interleaved.
import sharp from "sharp";
import { type RawImage, visualDiff } from "../lib/monitors/diff.js";
import { type Sample, stats } from "./stats.js";

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

export async function benchMonitorCheck(options: { fixturesUrl: string; serviceUrl: string; apiKey: string; rounds: number }) {
  const call = async (method: string, route: string, body?: unknown) => {
    const res = await fetch(`${options.serviceUrl}/api/v1${route}`, {
      method,
      headers: { "content-type": "application/json", authorization: `Bearer ${options.apiKey}` },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    if (res.status >= 300) throw new Error(`monitor bench: ${method} ${route}: ${res.status} ${await res.text()}`);
    return res;
  };
  const capture = { url: `${options.fixturesUrl}/monitor/article?id=bench-${Date.now()}`, width: 1280, height: 800, fullPage: true, deviceScaleFactor: 1 };
  const monitor = (await (await call("POST", "/monitors", { ...capture, mode: "visual", every: "1d" })).json()) as { id: string; first_check_id: string };
  /** The check's time in the worker (ms), once it is done. */
  const checkMs = async (checkId: string): Promise<number> => {
    for (;;) {
      const { checks } = (await (await call("GET", `/monitors/${monitor.id}/checks?limit=5`)).json()) as {
        checks: { id: string; status: string; outcome?: string; started_at?: string; finished_at?: string }[];
      };
      const check = checks.find((c) => c.id === checkId);
      if (check?.status === "done") {
        if (check.outcome === "failed") throw new Error("monitor bench: a check failed");
        return Date.parse(check.finished_at!) - Date.parse(check.started_at!);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  await checkMs(monitor.first_check_id);
  const screenshots: Sample = [];
  const checks: Sample = [];
  for (let round = 0; round < options.rounds; round++) {
    const started = performance.now();
    await (await call("POST", "/screenshot", capture)).arrayBuffer();
    screenshots.push(performance.now() - started);
    const { check_id } = (await (await call("POST", `/monitors/${monitor.id}/check`)).json()) as { check_id: string };
    checks.push(await checkMs(check_id));
  }
  await call("DELETE", `/monitors/${monitor.id}`);
  const results = { screenshot: stats(screenshots), check: stats(checks) };
  const ratios = { monitor_check_vs_screenshot: Number((results.check.p50_ms / results.screenshot.p50_ms).toFixed(2)) };
  const print = () =>
    console.log(
      `monitor check: p50 ${results.check.p50_ms} ms in the worker against a screenshot's ${results.screenshot.p50_ms} ms: monitor_check_vs_screenshot ${ratios.monitor_check_vs_screenshot} (goal <= 1.3)`,
    );
  return { results, ratios, print };
}
