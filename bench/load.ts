// `npm run load`: mixed traffic against the local stack, loopback only, bounded in count and time.
//   normal   LOAD_REQUESTS (500) requests at concurrency 8: screenshots, HTML renders, mockups,
//            metadata and usage, against the fixture pages on 127.0.0.1
//   hostile  the same, with one request in ten a page of the hostile zoo (dev/harness/hostile-pages.ts)
// Reports throughput, p50/p95, unexpected answers (must be 0), and what the service holds (heap,
// sockets, Chromium processes and their memory, contexts) before and after each run. Writes the
// figures to bench/results.json under "load", next to `npm run bench`'s.
import { fundedKey, startDev } from "../dev/harness/dev-process.js";
import { startFixtures } from "../dev/harness/fixtures.js";
import { drift, type RenderState, renderState } from "../dev/harness/render-state.js";
import { stats, writeResults } from "./stats.js";

const REQUESTS = Number(process.env.LOAD_REQUESTS ?? 500);
const CONCURRENCY = 8;
// The page-load limit of the stack under load: the hostile pages that never finish hold a slot this long.
const PAGE_LOAD_MS = 5_000;
// A run stops sending after this long, whatever is left (a bound, not a target).
const RUN_LIMIT_MS = 15 * 60_000;

type Kind = "screenshot" | "html" | "mockup" | "metadata" | "usage" | "hostile";
type Request = {
  kind: Kind;
  path: string;
  method: "GET" | "POST";
  body?: unknown;
  paid: boolean;
  expected: (status: number, code: string | undefined) => boolean;
};

const ok = (status: number) => status === 200;

async function main() {
  const fixtures = await startFixtures();
  const dev = await startDev({
    ALLOWED_PRIVATE_HOSTS: new URL(fixtures.baseUrl).host,
    PAGE_LOAD_TIMEOUT_MS: String(PAGE_LOAD_MS),
    // So that /__dev/render-stats measures the heap after a full collection.
    NODE_OPTIONS: "--expose-gc",
  });
  const baseUrl = dev.info.baseUrl;
  const apiKey = await fundedKey(baseUrl, dev.localDir, "load@shotline.test", 1000);
  const pid = dev.child.pid!;

  const normal: Request[] = [
    { kind: "screenshot", method: "POST", path: "/api/v1/screenshot", body: { url: `${fixtures.baseUrl}/simple` }, paid: true, expected: ok },
    {
      kind: "screenshot",
      method: "POST",
      path: "/api/v1/screenshot",
      body: { url: `${fixtures.baseUrl}/tall?h=2000`, fullPage: true, format: "jpeg" },
      paid: true,
      expected: ok,
    },
    {
      kind: "html",
      method: "POST",
      path: "/api/v1/html-to-screenshot",
      body: { html: "<h1 style='font:48px sans-serif'>Load</h1>", width: 800, height: 600 },
      paid: true,
      expected: ok,
    },
    { kind: "mockup", method: "POST", path: "/api/v1/screenshot", body: { url: `${fixtures.baseUrl}/simple`, style: "mockup" }, paid: true, expected: ok },
    { kind: "metadata", method: "POST", path: "/api/v1/metadata", body: { url: `${fixtures.baseUrl}/meta/news` }, paid: false, expected: ok },
    { kind: "metadata", method: "POST", path: "/api/v1/metadata", body: { url: `${fixtures.baseUrl}/meta/full` }, paid: false, expected: ok },
    { kind: "usage", method: "GET", path: "/api/v1/usage", paid: true, expected: ok },
  ];
  // The zoo's cases with every answer they may give; anything else (a 5xx that is not ours, a hang) is unexpected.
  const zoo = (name: string, outcomes: string[]): Request => ({
    kind: "hostile",
    method: "POST",
    path: "/api/v1/screenshot",
    body: { url: `${fixtures.baseUrl}/zoo/${name}`, width: 800, height: 600, deviceScaleFactor: 1 },
    paid: true,
    expected: (status, code) => outcomes.includes(status === 200 ? "200" : `${status} ${code}`),
  });
  const hostile: Request[] = [
    zoo("status-000", ["422 INVALID_URL"]),
    zoo("double-length", ["422 INVALID_URL"]),
    zoo("huge-header", ["422 INVALID_URL"]),
    zoo("reset", ["422 INVALID_URL"]),
    zoo("redirect-loop", ["422 INVALID_URL"]),
    zoo("download", ["422 INVALID_URL"]),
    zoo("dialogs", ["200"]),
    zoo("popups", ["200"]),
    zoo("control-title", ["200"]),
    zoo("memory-bomb", ["500 RENDER_ERROR"]),
    zoo("loop-after-load", ["504 RENDER_TIMEOUT"]),
    zoo("loop-before-load", ["504 RENDER_TIMEOUT"]),
    zoo("hang", ["504 RENDER_TIMEOUT"]),
    // Chromium may run out of memory parsing the first 256 MB: its renderer crashes.
    zoo("gigabyte", ["422 INVALID_URL", "500 RENDER_ERROR", "504 RENDER_TIMEOUT"]),
    zoo("fetch-flood", ["200", "422 INVALID_URL", "504 RENDER_TIMEOUT"]),
  ];

  /** Sends `plan`, CONCURRENCY requests at a time, within RUN_LIMIT_MS; returns latencies by kind and the unexpected answers. */
  async function runPlan(plan: Request[]) {
    const latencies = new Map<Kind, number[]>();
    const unexpected: string[] = [];
    let next = 0;
    const started = Date.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < plan.length && Date.now() - started < RUN_LIMIT_MS) {
          const request = plan[next++]!;
          const sent = performance.now();
          const res = await fetch(`${baseUrl}${request.path}`, {
            method: request.method,
            headers: { "content-type": "application/json", ...(request.paid ? { authorization: `Bearer ${apiKey}` } : {}) },
            body: request.body === undefined ? undefined : JSON.stringify(request.body),
          }).catch((error: unknown) => error as Error);
          if (res instanceof Error) {
            unexpected.push(`${request.kind}: no answer (${res.message})`);
            continue;
          }
          const text = await res.text();
          let code: string | undefined;
          if (res.status !== 200) {
            try {
              code = (JSON.parse(text) as { error?: { code?: string } }).error?.code;
            } catch {}
          }
          const ms = performance.now() - sent;
          latencies.set(request.kind, [...(latencies.get(request.kind) ?? []), ms]);
          if (!request.expected(res.status, code) || (res.status >= 500 && code === undefined)) {
            unexpected.push(`${request.kind} ${JSON.stringify(request.body ?? "").slice(0, 80)}: ${res.status} ${text.slice(0, 120)}`);
          }
        }
      }),
    );
    return { latencies, unexpected, sent: Math.min(next, plan.length) };
  }

  /** The service's log lines saying it killed a wedged browser, so far. */
  const browserKills = () =>
    dev
      .output()
      .split("\n")
      .filter((line) => line.includes('"browser killed"'));

  /** Sends `count` requests, `CONCURRENCY` at a time; one in `hostileEvery` from the zoo (0: none). */
  async function run(name: string, hostileEvery: number) {
    const plan = Array.from({ length: REQUESTS }, (_, i) =>
      hostileEvery > 0 && i % hostileEvery === hostileEvery - 1 ? hostile[Math.floor(i / hostileEvery) % hostile.length]! : normal[i % normal.length]!,
    );
    const before = await settledState(baseUrl, pid);
    const killsBefore = browserKills().length;
    const started = Date.now();
    const { latencies, unexpected, sent } = await runPlan(plan);
    const seconds = (Date.now() - started) / 1000;
    const killed = browserKills().slice(killsBefore);
    const after = await settledState(baseUrl, pid, before);
    const all = [...latencies.values()].flat();
    const result = {
      requests: sent,
      concurrency: CONCURRENCY,
      seconds: Number(seconds.toFixed(1)),
      throughput_per_s: Number((all.length / seconds).toFixed(2)),
      ...stats(all),
      by_kind: Object.fromEntries([...latencies].map(([kind, samples]) => [kind, stats(samples)])),
      unexpected: unexpected.length,
      // Browsers killed because a page wedged them (docs/api.md, "A page cannot stall the browser for others").
      browser_kills: killed.length,
      before,
      after,
      grew: drift(before, after),
    };
    console.log(
      `${name.padEnd(8)} ${result.requests} requests in ${result.seconds} s: ${result.throughput_per_s}/s  p50 ${result.p50_ms} ms  p95 ${result.p95_ms} ms  unexpected ${result.unexpected}`,
    );
    for (const [kind, s] of Object.entries(result.by_kind)) console.log(`         ${kind.padEnd(10)} p50 ${s.p50_ms} ms  p95 ${s.p95_ms} ms  n=${s.n}`);
    console.log(
      `         before ${JSON.stringify(before)}\n         after  ${JSON.stringify(after)}${result.grew.length ? `\n         GREW: ${result.grew.join(", ")}` : ""}`,
    );
    for (const line of unexpected.slice(0, 10)) console.log(`         unexpected: ${line}`);
    for (const line of killed) console.log(`         ${line}`);
    return result;
  }

  // Warm before the baseline: browsers launched and every kind of request served at full
  // concurrency (the composer keeps up to one page per render slot open).
  const warm = await runPlan(normal.slice(0, 4).flatMap((request) => Array<Request>(CONCURRENCY).fill(request)));
  if (warm.unexpected.length) throw new Error(`warm-up failed: ${warm.unexpected.join("; ")}`);
  const results = {
    machine: { cpus: (await import("node:os")).cpus().length },
    page_load_ms: PAGE_LOAD_MS,
    normal: await run("normal", 0),
    hostile: await run("hostile", 10),
  };
  const out = writeResults({ load: results });
  console.log(`written to ${out}`);
  await dev.stop();
  await fixtures.close();
  const failed = results.normal.unexpected + results.hostile.unexpected > 0 || results.normal.grew.length + results.hostile.grew.length > 0;
  process.exit(failed ? 1 : 0);
}

/** The service's state once renderer processes that are on their way out have gone (up to 15 s). */
async function settledState(baseUrl: string, pid: number, baseline?: RenderState): Promise<RenderState> {
  let state = await renderState(baseUrl, pid);
  for (const until = Date.now() + 15_000; baseline && drift(baseline, state).length > 0 && Date.now() < until; ) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    state = await renderState(baseUrl, pid);
  }
  return state;
}

await main();
