// `npm run bench`: how much the service adds to a bare render, measured in one run on this machine.
//   service          POST /api/v1/screenshot through the whole local stack (HTTP, pipeline, guard proxy,
//                    fresh incognito context, capture, base64 transport)
//   floor            a bare puppeteer-core script on a warm browser of the same Chromium: newPage, goto, screenshot
//   capture_website  the npm package capture-website pointed at the same Chromium binary
//   mockup           the service with style "mockup" (browser frame, gradient, shadow) on the same pages
//   ads / ads_blocked  an article with 12 ad slots (each ad answered after 300 ms), without and with blockAds
// Then the filter engines' cold cost (bench/filter-lists.ts), output forms (bench/outputs.ts: WebP and
// AVIF vs PNG, a full page in tiles vs one under the limit), metadata (bench/metadata.ts): our
// extraction vs metascraper and open-graph-scraper, the render cache (bench/cache.ts), MCP vs REST
// (bench/mcp.ts), animations vs a full-page screenshot (bench/animate.ts), the monitors' diff (bench/diff.ts), main-content quality on real pages (bench/content-quality.ts), real pages with their
// third parties unreachable vs a plain Chromium (bench/real-pages.ts), and content speed vs jsdom +
// Readability + turndown and vs metadata through HTTP (bench/content-speed.ts), jobs through the
// queue vs synchronous and their webhooks' lag (bench/jobs.ts), crawls vs Crawlee (bench/crawl.ts), throughput at concurrency 1-8 vs the floor (bench/throughput.ts), and last, a
// Lambda cold start of the bundled render function vs @sparticuz/chromium's own (bench/cold-start.ts).
// Scenarios alternate within each round so that machine noise hits them alike. Writes bench/results.json.
import puppeteer from "puppeteer-core";
import { quietChromium } from "../dev/harness/browser.js";
import { fundedKey, readDevInfo, spawnDev } from "../dev/harness/dev-process.js";
import { startFixtures } from "../dev/harness/fixtures.js";
import { benchAnimate } from "./animate.js";
import { benchCache } from "./cache.js";
import { benchColdStart } from "./cold-start.js";
import { benchContentQuality } from "./content-quality.js";
import { benchContentSpeed } from "./content-speed.js";
import { benchCrawl, crawlBenchSites } from "./crawl.js";
import { benchDiff, benchMonitorCheck } from "./diff.js";
import { benchFilterLists } from "./filter-lists.js";
import { benchJobs } from "./jobs.js";
import { benchMcp } from "./mcp.js";
import { benchMetadata } from "./metadata.js";
import { benchOutputs } from "./outputs.js";
import { benchCaptureLogs } from "./page-logs.js";
import { benchRealPages } from "./real-pages.js";
import { type Sample, stats, writeResults } from "./stats.js";
import { benchThroughput } from "./throughput.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const COLD_ROUNDS = Number(process.env.BENCH_COLD_ROUNDS ?? 5);
const PAGES = ["/simple", "/tall?h=2000"];
const VIEWPORT = { width: 1280, height: 800, deviceScaleFactor: 2 };

async function main() {
  const fixtures = await startFixtures();
  const launchOptions = await quietChromium();

  // Cold start: process start -> first PNG through the local stack (signup and credit included).
  const coldStart = Date.now();
  // Requests without a key (metadata_anonymous) are limited per client IP: all of the bench's are one IP.
  // localhost: the fixtures' hosts that never answer (bench/real-pages.ts).
  // The crawl bench's sites, which the stack must be let through to (bench/crawl.ts).
  const crawlSites = await crawlBenchSites();
  const dev = spawnDev({
    ALLOWED_PRIVATE_HOSTS: [new URL(fixtures.baseUrl).host, `localhost:${new URL(fixtures.baseUrl).port}`, ...crawlSites.hosts].join(","),
    LOG_LEVEL: "warn",
    RATE_LIMIT_PER_SECOND: "1000",
  });
  // A scenario that fails ends the bench (process.exit below): its local stack must not outlive it.
  process.once("exit", () => dev.child.kill("SIGTERM"));
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setInterval(() => {
      const match = /running at (http:\/\/[\d.:]+)/.exec(dev.output());
      if (match) {
        clearInterval(timer);
        resolve(match[1]!);
      }
    }, 20);
    void dev.exited.then(() => reject(new Error(`local stack exited:\n${dev.output()}`)));
  });
  // An account with credit and a rate limit the bench cannot hit, as an operator would set up.
  const apiKey = await fundedKey(baseUrl, dev.localDir, "bench@shotline.test", 100);
  const screenshot = async (page: string, extra: Record<string, unknown> = {}) => {
    const res = await fetch(`${baseUrl}/api/v1/screenshot`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${apiKey}` },
      body: JSON.stringify({ url: `${fixtures.baseUrl}${page}`, ...VIEWPORT, ...extra }),
    });
    const body = Buffer.from(await res.arrayBuffer());
    if (res.status !== 200 || body.subarray(1, 4).toString() !== "PNG") throw new Error(`service answered ${res.status}: ${body.toString().slice(0, 200)}`);
  };
  const service = (page: string) => screenshot(page);
  const mockup = (page: string) => screenshot(page, { style: "mockup" });
  await service(PAGES[0]!);
  const coldFirstMs = Date.now() - coldStart;

  const browser = await puppeteer.launch({ ...launchOptions, pipe: true });
  const floor = async (page: string) => {
    const tab = await browser.newPage();
    try {
      await tab.setViewport(VIEWPORT);
      await tab.goto(`${fixtures.baseUrl}${page}`, { waitUntil: "load" });
      await tab.screenshot({ type: "png" });
    } finally {
      await tab.close();
    }
  };
  const { default: captureWebsite } = await import("capture-website");
  const captureWebsiteRun = async (page: string) => {
    await captureWebsite.buffer(`${fixtures.baseUrl}${page}`, {
      width: VIEWPORT.width,
      height: VIEWPORT.height,
      scaleFactor: VIEWPORT.deviceScaleFactor,
      type: "png",
      blockAds: false, // its ad lists would be fetched from the internet
      launchOptions: launchOptions as never,
    });
  };

  const scenarios = { service, floor, capture_website: captureWebsiteRun, mockup } as const;
  const samples: Record<keyof typeof scenarios, Sample> = { service: [], floor: [], capture_website: [], mockup: [] };
  const names = Object.keys(scenarios) as (keyof typeof scenarios)[];
  // Warm-up round, not recorded.
  for (const name of names) for (const page of PAGES) await scenarios[name](page);
  for (let round = 0; round < ROUNDS; round++) {
    const page = PAGES[round % PAGES.length]!;
    // Rotate the order each round.
    for (let i = 0; i < names.length; i++) {
      const name = names[(round + i) % names.length]!;
      const started = performance.now();
      await scenarios[name](page);
      samples[name].push(performance.now() - started);
    }
  }

  // blockAds on an ad-heavy page, the two alternating (which goes first swaps each round).
  const adScenarios = { ads: () => screenshot("/ad-heavy"), ads_blocked: () => screenshot("/ad-heavy", { blockAds: true }) };
  const adSamples: Record<keyof typeof adScenarios, Sample> = { ads: [], ads_blocked: [] };
  await adScenarios.ads();
  await adScenarios.ads_blocked();
  for (let round = 0; round < ROUNDS; round++) {
    for (const name of round % 2 ? (["ads", "ads_blocked"] as const) : (["ads_blocked", "ads"] as const)) {
      const started = performance.now();
      await adScenarios[name]();
      adSamples[name].push(performance.now() - started);
    }
  }

  const results = {
    machine: { cpus: (await import("node:os")).cpus().length, node: process.version },
    viewport: VIEWPORT,
    pages: PAGES,
    service: stats(samples.service),
    floor: stats(samples.floor),
    capture_website: stats(samples.capture_website),
    mockup: stats(samples.mockup),
    ads: stats(adSamples.ads),
    ads_blocked: stats(adSamples.ads_blocked),
    filter_lists: benchFilterLists(),
    cold_first_ms: coldFirstMs,
    ratios: {} as Record<string, number>,
  };
  results.ratios.service_vs_floor = Number((results.service.p50_ms / results.floor.p50_ms).toFixed(2));
  results.ratios.capture_website_vs_service = Number((results.capture_website.p50_ms / results.service.p50_ms).toFixed(2));
  results.ratios.mockup_vs_plain = Number((results.mockup.p50_ms / results.service.p50_ms).toFixed(2));
  results.ratios.ads_vs_blockads = Number((results.ads.p50_ms / results.ads_blocked.p50_ms).toFixed(2));
  const outputs = await benchOutputs({ fixturesUrl: fixtures.baseUrl, serviceUrl: baseUrl, apiKey, rounds: ROUNDS });
  Object.assign(results.ratios, outputs.ratios);
  const metadata = await benchMetadata({ fixturesUrl: fixtures.baseUrl, serviceUrl: baseUrl, apiKey, rounds: ROUNDS });
  Object.assign(results.ratios, metadata.ratios);
  // Main-content quality on real pages with their true article bodies (bench/content-quality.ts).
  const content = benchContentQuality();
  Object.assign(results.ratios, content.ratios);
  // Real pages with their third parties unreachable: the share a plain Chromium shows that the service answers with content (bench/real-pages.ts).
  const realPages = await benchRealPages({ fixturesUrl: fixtures.baseUrl, serviceUrl: baseUrl, apiKey, browser });
  Object.assign(results.ratios, realPages.ratios);
  // Content speed: the usual Node pipeline on the same pages, and content vs metadata through HTTP (bench/content-speed.ts).
  const contentSpeed = await benchContentSpeed({ fixturesUrl: fixtures.baseUrl, serviceUrl: baseUrl, apiKey, rounds: ROUNDS });
  Object.assign(results.ratios, contentSpeed.ratios);
  // Jobs: items a second through the local queue and worker vs synchronous, and the webhook's lag (bench/jobs.ts).
  // A second account for fair shares: it queues a backlog while the first submits small jobs.
  const hogKey = await fundedKey(baseUrl, dev.localDir, "bench-hog@shotline.test", 10);
  const jobs = await benchJobs({ fixturesUrl: fixtures.baseUrl, serviceUrl: baseUrl, apiKey, hogKey });
  Object.assign(results.ratios, jobs.ratios);
  // Crawls: pages a second vs Crawlee's CheerioCrawler at the same two requests per host (bench/crawl.ts).
  const crawl = await benchCrawl({ serviceUrl: baseUrl, apiKey, sites: crawlSites });
  Object.assign(results.ratios, crawl.ratios);
  const cache = await benchCache({ fixturesUrl: fixtures.baseUrl, serviceUrl: baseUrl, apiKey, rounds: ROUNDS });
  Object.assign(results.ratios, cache.ratios);
  const animate = await benchAnimate({ fixturesUrl: fixtures.baseUrl, serviceUrl: baseUrl, apiKey, rounds: ROUNDS });
  Object.assign(results.ratios, animate.ratios);
  const diff = await benchDiff({ serviceUrl: baseUrl, apiKey });
  const monitorCheck = await benchMonitorCheck({ fixturesUrl: fixtures.baseUrl, serviceUrl: baseUrl, apiKey, rounds: ROUNDS });
  Object.assign(results.ratios, monitorCheck.ratios);
  const captureLogs = await benchCaptureLogs({ fixturesUrl: fixtures.baseUrl, serviceUrl: baseUrl, apiKey, rounds: ROUNDS });
  Object.assign(results.ratios, captureLogs.ratios);
  const mcp = await benchMcp({ fixturesUrl: fixtures.baseUrl, serviceUrl: baseUrl, apiKey, rounds: ROUNDS });
  Object.assign(results.ratios, mcp.ratios);
  const throughput = await benchThroughput({ fixturesUrl: fixtures.baseUrl, serviceUrl: baseUrl, apiKey, servicePid: dev.child.pid!, browser });
  Object.assign(results.ratios, throughput.ratios);
  const cold = await benchColdStart({ fixturesUrl: fixtures.baseUrl, info: readDevInfo(dev.localDir), apiKey, rounds: COLD_ROUNDS });
  Object.assign(results.ratios, cold.ratios);

  const out = writeResults({
    ...results,
    outputs: outputs.results,
    metadata: metadata.results,
    content: content.results,
    real_pages: realPages.results,
    content_speed: contentSpeed.results,
    jobs: jobs.results,
    crawl: crawl.results,
    mcp: mcp.results,
    cache: cache.results,
    animate: animate.results,
    monitor_diff: diff.results,
    monitor_check: monitorCheck.results,
    capture_logs: captureLogs.results,
    throughput: throughput.results,
    lambda_cold_start: cold.results,
  });
  for (const name of names)
    console.log(
      `${name.padEnd(16)} p50 ${String(results[name].p50_ms).padStart(5)} ms   p95 ${String(results[name].p95_ms).padStart(5)} ms   n=${results[name].n}`,
    );
  console.log(`local stack start to first PNG: ${coldFirstMs} ms`);
  console.log(
    `service_vs_floor ${results.ratios.service_vs_floor} (target <= 1.05)   capture_website_vs_service ${results.ratios.capture_website_vs_service} (target >= 3)`,
  );
  console.log(`mockup_vs_plain ${results.ratios.mockup_vs_plain} (target <= 1.3)`);
  console.log(
    `ad-heavy page p50 ${results.ads.p50_ms} ms, with blockAds ${results.ads_blocked.p50_ms} ms: ${results.ads.p50_ms - results.ads_blocked.p50_ms} ms saved (ads_vs_blockads ${results.ratios.ads_vs_blockads})`,
  );
  const { build_ms, load_ms } = results.filter_lists;
  console.log(
    `filter engines, fresh process: build ads ${build_ms.ads} ms, trackers ${build_ms.trackers} ms (at deploy); load ads ${load_ms.ads} ms, trackers ${load_ms.trackers} ms (first use per instance)`,
  );
  outputs.print();
  metadata.print();
  console.log(
    `content: main-text F1 ${content.results.f1} (precision ${content.results.precision}, recall ${content.results.recall}) on ${content.results.pages} real pages with their true article bodies (target >= 0.96), ${content.results.ms_per_page} ms a page; Readability.js ${content.results.readability.f1} (${content.results.readability.precision}, ${content.results.readability.recall})`,
  );
  const { ours, readability, pages } = content.results.wcxb_test_articles;
  console.log(
    `content, WCXB's held-out articles (${pages}): F1 ${ours.f1} (precision ${ours.precision}, recall ${ours.recall}), snippets found ${ours.snippets_found}, boilerplate left out ${ours.boilerplate_left_out}; Readability.js F1 ${readability.f1} (${readability.precision}, ${readability.recall}), ${readability.snippets_found}, ${readability.boilerplate_left_out} (wcxb_snippets_vs_readability ${content.ratios.wcxb_snippets_vs_readability}, target >= 1)`,
  );
  const sample = content.results.trafilatura_eval_sample;
  console.log(
    `content, trafilatura's evaluation pages (a sample of ${sample.pages}): precision ${sample.ours.precision}, recall ${sample.ours.recall}; Readability.js ${sample.readability.precision}, ${sample.readability.recall} (trafilatura_precision_vs_readability ${content.ratios.trafilatura_precision_vs_readability}, trafilatura_recall_vs_readability ${content.ratios.trafilatura_recall_vs_readability}, targets >= 1)`,
  );
  console.log(
    `real pages, third parties unreachable: ${realPages.results.served_with_content} of the ${realPages.results.shown_by_plain_chromium} a plain Chromium shows came back with content (real_pages_ok ${realPages.ratios.real_pages_ok}, target >= 0.99), ${realPages.results.captured_incomplete} of ${realPages.results.pages} captured at the page-load limit; failed ${JSON.stringify(realPages.results.failed_by_status)}; p50 ${realPages.results.p50_ms} ms; content rendered vs static on ${realPages.results.content.pages} of them: F1 ${realPages.results.content.rendered.f1} vs ${realPages.results.content.static.f1}, recall ${realPages.results.content.rendered.recall} vs ${realPages.results.content.static.recall} (rendered_vs_static_recall ${realPages.ratios.rendered_vs_static_recall})`,
  );
  contentSpeed.print();
  jobs.print();
  cache.print();
  animate.print();
  diff.print();
  monitorCheck.print();
  captureLogs.print();
  mcp.print();
  throughput.print();
  cold.print();
  console.log(`written to ${out}`);

  await browser.close();
  dev.child.kill("SIGTERM");
  await dev.exited;
  await fixtures.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
