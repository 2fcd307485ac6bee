// Cold start as Lambda sees it, in `npm run bench`. The render function exactly as `sst deploy`
// bundles it (dev/harness/bundle.ts synthesizes the app, as test/infra does), started in a fresh
// Node process with an empty /tmp (TMPDIR) and the layers' folders where the deployed environment
// variables point, invoked once with a screenshot of a fixture page (1280x800, PNG):
//   cold_ms          spawning the process -> the first PNG answered
//   init_ms          process start -> the handler's module imported (Lambda's INIT: boosted CPU)
//   first_invoke_ms  the first invocation, start to answer
// Baseline, alternating with it: bench/stock-cold.mjs, @sparticuz/chromium as its README uses it
// (inflate, launch, new page, screenshot) in the same kind of fresh process = stock_cold_ms.
// The ledger is the local stack's DynamoDB Local (AWS itself cannot run here).
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { artifactOf, deploymentSize, firstLine, invokeBundle, lambdaEnvironment, synthesize } from "../dev/harness/bundle.js";
import type { DevInfo } from "../dev/stack.js";
import { type Sample, stats } from "./stats.js";

const STOCK = path.join(path.dirname(fileURLToPath(import.meta.url)), "stock-cold.mjs");

/**
 * bench/stock-cold.mjs in a fresh process with `tmp` as its /tmp: ms from spawn to its PNG. The stock
 * browser sometimes dies while launching (seen here: once in 30); that start is counted in `failures`
 * and made again, so that one crash of the baseline does not lose the whole run.
 */
async function stockCold(url: string, tmp: string, failures: { count: number }): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    try {
      return (await firstLine([STOCK, url], { PATH: process.env.PATH, HOME: tmp, TMPDIR: tmp })).ms;
    } catch (error) {
      failures.count++;
      if (attempt === 3) throw error;
      rmSync(tmp, { recursive: true, force: true });
      mkdirSync(tmp);
    }
  }
}

export async function benchColdStart(options: { fixturesUrl: string; info: DevInfo; apiKey: string; rounds: number }) {
  const outdir = await synthesize();
  const dir = artifactOf("screenshot");
  // What the rendering function holds of Lambda's 250 MiB (function + layers, unzipped), in MiB.
  const size = deploymentSize("html-to-screenshot");
  const mib = (bytes: number) => Number((bytes / 2 ** 20).toFixed(1));
  const url = `${options.fixturesUrl}/simple`;
  const samples: Record<"cold" | "init" | "first_invoke" | "stock_cold", Sample> = { cold: [], init: [], first_invoke: [], stock_cold: [] };
  const stockFailures = { count: 0 };
  const fresh = () => mkdtempSync(path.join(tmpdir(), "shotline-lambda-tmp-"));
  try {
    for (let round = 0; round < options.rounds; round++) {
      // Which goes first swaps each round.
      const order = round % 2 ? ["ours", "stock"] : ["stock", "ours"];
      for (const which of order) {
        const tmp = fresh();
        try {
          if (which === "stock") {
            samples.stock_cold.push(await stockCold(url, tmp, stockFailures));
            continue;
          }
          const env = { ...lambdaEnvironment(dir, options.info, tmp), ALLOWED_PRIVATE_HOSTS: new URL(options.fixturesUrl).host };
          const run = await invokeBundle(dir, "screenshot", { url, width: 1280, height: 800, deviceScaleFactor: 1 }, options.apiKey, env);
          const { statusCode, body } = run.result;
          if (statusCode !== 200 || Buffer.from(body, "base64").subarray(1, 4).toString() !== "PNG")
            throw new Error(`the bundled screenshot answered ${statusCode}: ${body.slice(0, 300)}`);
          samples.cold.push(run.total_ms);
          samples.init.push(run.init_ms);
          samples.first_invoke.push(run.invoke_ms);
        } finally {
          rmSync(tmp, { recursive: true, force: true });
        }
      }
    }
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
  const results = {
    cold: stats(samples.cold),
    init: stats(samples.init),
    first_invoke: stats(samples.first_invoke),
    stock_cold: stats(samples.stock_cold),
    stock_cold_failures: stockFailures.count,
    size_mib: {
      code: mib(size.code),
      chromium_layer: mib(size.layers.chromium),
      fonts_layer: mib(size.layers.fonts),
      filter_lists_layer: mib(size.layers["filter-lists"]),
      total: mib(size.total),
      limit: 250,
    },
    samples_ms: Object.fromEntries(Object.entries(samples).map(([name, values]) => [name, values.map(Math.round)])),
  };
  const ratios = { stock_cold_vs_cold: Number((results.stock_cold.p50_ms / results.cold.p50_ms).toFixed(2)) };
  const print = () => {
    console.log(
      `html-to-screenshot unzipped: ${results.size_mib.total} MiB of Lambda's 250 (code ${results.size_mib.code}, Chromium ${results.size_mib.chromium_layer}, fonts ${results.size_mib.fonts_layer}, filter lists ${results.size_mib.filter_lists_layer})`,
    );
    console.log(
      `cold start (bundled function, empty /tmp) p50 ${results.cold.p50_ms} ms = INIT ${results.init.p50_ms} + first invoke ${results.first_invoke.p50_ms} (goal <= 2000); stock @sparticuz/chromium ${results.stock_cold.p50_ms} ms: stock_cold_vs_cold ${ratios.stock_cold_vs_cold} (goal >= 2)${stockFailures.count ? `; the stock browser died launching ${stockFailures.count} time(s), started again` : ""}`,
    );
  };
  return { results, ratios, print };
}
