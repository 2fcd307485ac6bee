// Real pages in `npm run bench`: Zyte's 181 article pages (bench/corpus/) served on loopback with
// their third parties unreachable (dev/harness/real-pages.ts: most hosts refused at once, one in eight
// accepting and never answering), each rendered once with default options (1280x800 at 1x).
//   plain    a plain Chromium on the same network (the bench's bare browser, no guard): the page
//            shown after DOMContentLoaded and 8 s. Pages it shows with content are the measure's.
//   service  POST /api/v1/screenshot through the whole local stack.
// real_pages_ok: the share of the plain browser's pages that the service answers with an image
// with visible content (goal >= 0.99); with how many were captured at the page-load limit
// (X-Capture-Incomplete), and how many failed, by status.
// Then what the hidden-text filter costs on real rendered pages: POST /api/v1/content with
// render "always" on the first BENCH_REAL_CONTENT_PAGES (40) pages, every third party refused at
// once (none hanging: a page whose parser waits on one would be read only in part), scored against their true
// article bodies as bench/content-quality.ts scores, next to the static read of the same pages
// (the same extractor, no browser): rendered_vs_static_recall.
import { setTimeout as sleep } from "node:timers/promises";
import type { Browser } from "puppeteer-core";
import sharp from "sharp";
import { realArticle, realPage, realPageIds } from "../dev/harness/real-pages.js";
import { mainText } from "../lib/content/extract.js";
import { scoreTexts } from "./content-quality.js";

/** Pages rendered at once by the service (the local stack's browser slots). */
const CONCURRENCY = 4;
/** Pages the plain browser holds at once: most of its time is waiting (8 s each, up to 53 s on a page whose stylesheet never comes). */
const PLAIN_CONCURRENCY = 8;
const VIEWPORT = { width: 1280, height: 800, deviceScaleFactor: 1 };
/** What the plain browser waits after DOMContentLoaded. */
const SHOWN_AFTER_MS = 8_000;
/** How long the plain browser's screenshot may take (a page that never drew has none). */
const SCREENSHOT_LIMIT_MS = 10_000;
/** An image shows content when this share of its pixels differ from its commonest colour. */
const INK_SHARE = 0.005;

async function hasContent(png: Buffer): Promise<boolean> {
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const counts = new Map<number, number>();
  for (let i = 0; i < data.length; i += 3) {
    const key = (data[i]! << 16) | (data[i + 1]! << 8) | data[i + 2]!;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return 1 - Math.max(...counts.values()) / (info.width * info.height) > INK_SHARE;
}

/** Runs `work` on every id, `concurrency` at once; the answers by id. */
async function each<T>(ids: readonly string[], work: (id: string) => Promise<T>, concurrency = CONCURRENCY): Promise<Map<string, T>> {
  const answers = new Map<string, T>();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < ids.length) {
        const id = ids[next++]!;
        if (process.env.BENCH_TRACE) console.error("start", id.slice(0, 8), new Date().toISOString());
        answers.set(id, await work(id));
        if (process.env.BENCH_TRACE) console.error("done", id.slice(0, 8), new Date().toISOString());
      }
    }),
  );
  return answers;
}

export async function benchRealPages(options: { fixturesUrl: string; serviceUrl: string; apiKey: string; browser: Browser }) {
  const ids = realPageIds().slice(0, Number(process.env.BENCH_REAL_PAGES ?? Number.POSITIVE_INFINITY));
  const url = (id: string) => `${options.fixturesUrl}/real/${id}`;
  const plain = await each(
    ids,
    async (id) => {
      const tab = await options.browser.newPage();
      try {
        await tab.setViewport(VIEWPORT);
        const loading = tab.goto(url(id), { waitUntil: "domcontentloaded", timeout: 30_000 }).catch(() => undefined);
        await Promise.race([loading, sleep(30_000)]);
        await sleep(SHOWN_AFTER_MS);
        // A page whose stylesheet never comes draws no frame: its screenshot would never come either.
        const shot = tab.screenshot({ type: "png" });
        shot.catch(() => undefined);
        const drawn = await Promise.race([shot, sleep(SCREENSHOT_LIMIT_MS).then(() => null)]);
        return drawn !== null && (await hasContent(Buffer.from(drawn)));
      } catch {
        return false;
      } finally {
        // A page that never drew may not close promptly either: it is not waited for long.
        await Promise.race([tab.close().catch(() => undefined), sleep(5_000)]);
      }
    },
    PLAIN_CONCURRENCY,
  );
  const served = await each(ids, async (id) => {
    const started = performance.now();
    const res = await fetch(`${options.serviceUrl}/api/v1/screenshot`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${options.apiKey}` },
      body: JSON.stringify({ url: url(id), ...VIEWPORT }),
    });
    const body = Buffer.from(await res.arrayBuffer());
    return {
      status: res.status,
      incomplete: res.headers.get("x-capture-incomplete") !== null,
      content: res.status === 200 && (await hasContent(body)),
      ms: performance.now() - started,
    };
  });
  const shown = ids.filter((id) => plain.get(id));
  const ok = shown.filter((id) => served.get(id)!.content);
  const failed: Record<string, number> = {};
  const failedPages: Record<string, number> = {};
  for (const id of shown) {
    const { status, content } = served.get(id)!;
    if (content) continue;
    failed[status] = (failed[status] ?? 0) + 1;
    failedPages[id.slice(0, 8)] = status;
  }
  const times = [...served.values()].map((s) => s.ms).sort((a, b) => a - b);
  const read = ids.slice(0, Number(process.env.BENCH_REAL_CONTENT_PAGES ?? 40));
  const rendered = await each(read, async (id) => {
    const res = await fetch(`${options.serviceUrl}/api/v1/content`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${options.apiKey}` },
      body: JSON.stringify({ url: `${url(id)}?hang=0`, render: "always", format: "text" }),
    });
    return res.status === 200 ? ((await res.json()) as { text: string }).text : "";
  });
  const round = (value: number) => Math.round(value * 1000) / 1000;
  const inBrowser = scoreTexts(read.map((id) => [realArticle(id), rendered.get(id)!] as const));
  const statically = scoreTexts(read.map((id) => [realArticle(id), mainText(realPage(id, options.fixturesUrl)!)] as const));
  return {
    ratios: {
      real_pages_ok: Number((ok.length / shown.length).toFixed(3)),
      rendered_vs_static_recall: round(inBrowser.recall / statically.recall),
    },
    results: {
      pages: ids.length,
      shown_by_plain_chromium: shown.length,
      served_with_content: ok.length,
      captured_incomplete: [...served.values()].filter((s) => s.incomplete).length,
      failed_by_status: failed,
      failed_pages: failedPages,
      p50_ms: Math.round(times[Math.floor(times.length / 2)] ?? 0),
      max_ms: Math.round(times.at(-1) ?? 0),
      content: {
        pages: read.length,
        rendered: { f1: round(inBrowser.f1), precision: round(inBrowser.precision), recall: round(inBrowser.recall) },
        static: { f1: round(statically.f1), precision: round(statically.precision), recall: round(statically.recall) },
      },
    },
  };
}
