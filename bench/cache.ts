// The render cache in `npm run bench`, through the whole local stack with an API key: a miss (a
// request with cacheTtl and a cacheKey never used: it renders and stores) alternates with a hit
// (the previous miss's request again). /simple, 1280x800 at 2x, PNG. Ratio hit_vs_miss (p50 over
// p50; goal <= 0.05) and the hit's p95 (goal < 100 ms).
import { type Sample, stats } from "./stats.js";

export async function benchCache(options: { fixturesUrl: string; serviceUrl: string; apiKey: string; rounds: number }) {
  const run = crypto.randomUUID();
  const send = async (cacheKey: string, expected: "HIT" | "MISS") => {
    const res = await fetch(`${options.serviceUrl}/api/v1/screenshot`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${options.apiKey}` },
      body: JSON.stringify({ url: `${options.fixturesUrl}/simple`, width: 1280, height: 800, deviceScaleFactor: 2, cacheTtl: 3600, cacheKey }),
    });
    await res.arrayBuffer();
    if (res.status !== 200 || res.headers.get("x-cache") !== expected)
      throw new Error(`cache bench: ${res.status} ${res.headers.get("x-cache")}, expected ${expected}`);
  };
  const samples: Record<"miss" | "hit", Sample> = { miss: [], hit: [] };
  await send(`${run}-warm`, "MISS");
  await send(`${run}-warm`, "HIT");
  for (let round = 0; round < options.rounds * 2; round++) {
    const key = `${run}-${round}`;
    let started = performance.now();
    await send(key, "MISS");
    samples.miss.push(performance.now() - started);
    started = performance.now();
    await send(key, "HIT");
    samples.hit.push(performance.now() - started);
  }
  const results = { miss: stats(samples.miss), hit: stats(samples.hit, 1) };
  const ratios = { hit_vs_miss: Number((results.hit.p50_ms / results.miss.p50_ms).toFixed(3)) };
  const print = () =>
    console.log(
      `cache hit p50 ${results.hit.p50_ms} ms (p95 ${results.hit.p95_ms}, goal < 100), miss ${results.miss.p50_ms} ms: hit_vs_miss ${ratios.hit_vs_miss} (goal <= 0.05)`,
    );
  return { results, ratios, print };
}
