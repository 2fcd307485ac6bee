// capture_overhead: a screenshot that records what its page did (`capture`: a HAR, the console and
// the failed requests, each stored and linked) against the same screenshot without, through HTTP,
// alternating so drift falls on both alike. The page: /requests (a document with six subresources,
// one from another origin, two that fail). Goal <= 1.1.
import { type Sample, stats } from "./stats.js";

export async function benchCaptureLogs(options: { fixturesUrl: string; serviceUrl: string; apiKey: string; rounds: number }) {
  const shoot = async (capture: object | undefined) => {
    const started = performance.now();
    const res = await fetch(`${options.serviceUrl}/api/v1/screenshot`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${options.apiKey}` },
      body: JSON.stringify({
        url: `${options.fixturesUrl}/requests?id=bench-logs`,
        width: 1280,
        height: 800,
        deviceScaleFactor: 1,
        ...(capture ? { capture } : {}),
      }),
    });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`capture bench: ${res.status}`);
    if (capture && !res.headers.get("x-har-url")) throw new Error("capture bench: no HAR link");
    return performance.now() - started;
  };
  await shoot(undefined);
  await shoot({ har: true, console: true, network: true });
  const plain: Sample = [];
  const logged: Sample = [];
  for (let round = 0; round < options.rounds; round++) {
    plain.push(await shoot(undefined));
    logged.push(await shoot({ har: true, console: true, network: true }));
  }
  const results = { plain: stats(plain), logged: stats(logged) };
  const ratios = { capture_overhead: Number((results.logged.p50_ms / results.plain.p50_ms).toFixed(2)) };
  const print = () =>
    console.log(
      `capture logs: p50 ${results.logged.p50_ms} ms with har, console and network against ${results.plain.p50_ms} ms without: capture_overhead ${ratios.capture_overhead} (goal <= 1.1)`,
    );
  return { results, ratios, print };
}
