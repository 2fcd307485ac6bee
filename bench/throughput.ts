// Throughput in `npm run bench`: screenshots per second at concurrency 1, 2, 4 and 8 of a simple
// fixture page (/simple, 1280x800 at 2x, PNG), SHOTS per level:
//   service  POST /api/v1/screenshot through the whole local stack
//   floor    bare puppeteer on the same warm browser the main bench uses (newPage, goto, screenshot)
// Levels and scenarios alternate. CPU seconds per shot: the service's process and its Chromium
// processes (not DynamoDB Local or the chain, which are AWS's on Lambda); the floor's Chromium only
// (its driver is this process, shared with the service's client). Ratio throughput_vs_floor at 4
// (goal >= 0.9), and errors (goal 0 at 8).
import type { Browser } from "puppeteer-core";
import { cpuSeconds } from "../dev/harness/render-state.js";

const SHOTS = Number(process.env.BENCH_SHOTS ?? 24);
const LEVELS = [1, 2, 4, 8] as const;
const VIEWPORT = { width: 1280, height: 800, deviceScaleFactor: 2 };

type Level = { shots_per_s: number; cpu_s_per_shot: number; errors: number };

/** Runs `shot` SHOTS times, `concurrency` at once; the rate, the CPU `cpu()` counted per shot, errors. */
async function measure(concurrency: number, shot: () => Promise<void>, cpu: () => number): Promise<Level> {
  let next = 0;
  let errors = 0;
  const cpuBefore = cpu();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < SHOTS) await shot().catch(() => errors++);
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return {
    shots_per_s: Number((SHOTS / seconds).toFixed(2)),
    cpu_s_per_shot: Number(((cpu() - cpuBefore) / SHOTS).toFixed(3)),
    errors,
  };
}

export async function benchThroughput(options: { fixturesUrl: string; serviceUrl: string; apiKey: string; servicePid: number; browser: Browser }) {
  const url = `${options.fixturesUrl}/simple`;
  const service = async () => {
    const res = await fetch(`${options.serviceUrl}/api/v1/screenshot`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${options.apiKey}` },
      body: JSON.stringify({ url, ...VIEWPORT }),
    });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`service answered ${res.status}`);
  };
  const floor = async () => {
    const tab = await options.browser.newPage();
    try {
      await tab.setViewport(VIEWPORT);
      await tab.goto(url, { waitUntil: "load" });
      await tab.screenshot({ type: "png" });
    } finally {
      await tab.close();
    }
  };
  const serviceCpu = () => cpuSeconds(options.servicePid, /chrom/);
  const floorCpu = () => cpuSeconds(options.browser.process()!.pid!);
  const results: Record<"service" | "floor", Record<string, Level>> = { service: {}, floor: {} };
  for (const [i, concurrency] of LEVELS.entries()) {
    const order = i % 2 ? (["floor", "service"] as const) : (["service", "floor"] as const);
    for (const name of order)
      results[name][String(concurrency)] = await measure(concurrency, name === "service" ? service : floor, name === "service" ? serviceCpu : floorCpu);
  }
  const ratios = { throughput_vs_floor: Number((results.service["4"]!.shots_per_s / results.floor["4"]!.shots_per_s).toFixed(2)) };
  const print = () => {
    for (const concurrency of LEVELS) {
      const s = results.service[String(concurrency)]!;
      const f = results.floor[String(concurrency)]!;
      console.log(
        `throughput at ${concurrency}: service ${s.shots_per_s}/s (${s.cpu_s_per_shot} CPU s/shot, ${s.errors} errors), floor ${f.shots_per_s}/s (${f.cpu_s_per_shot} CPU s/shot in Chromium)`,
      );
    }
    console.log(`throughput_vs_floor at 4: ${ratios.throughput_vs_floor} (goal >= 0.9)`);
  };
  return { results, ratios, print };
}
