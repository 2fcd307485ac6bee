// Output forms in `npm run bench`, through the whole local stack:
//   png / webp / avif   the same page (/showcase, 1280x800 at 2x) in each format: time and bytes
//   single / tiled      a full page under Chromium's one-piece limit (/bands?n=4: 800x8,000 device px)
//                       and one past it (/bands?n=20 at 2x: 800x40,000, captured in 5 tiles and
//                       stitched): time per output Mpx
// Scenarios alternate within each round, so machine noise hits them alike.
import { type Sample, stats } from "./stats.js";

const VIEWPORT = { width: 1280, height: 800, deviceScaleFactor: 2 };

export async function benchOutputs(options: { fixturesUrl: string; serviceUrl: string; apiKey: string; rounds: number }) {
  const render = async (body: Record<string, unknown>) => {
    const res = await fetch(`${options.serviceUrl}/api/v1/screenshot`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${options.apiKey}` },
      body: JSON.stringify({ ...body, url: `${options.fixturesUrl}${body.url}` }),
    });
    const bytes = (await res.arrayBuffer()).byteLength;
    if (res.status !== 200) throw new Error(`service answered ${res.status} for ${JSON.stringify(body)}`);
    return bytes;
  };
  const alternate = async <K extends string>(scenarios: Record<K, Record<string, unknown>>, rounds: number) => {
    const names = Object.keys(scenarios) as K[];
    const samples = Object.fromEntries(names.map((name) => [name, [] as Sample])) as Record<K, Sample>;
    const bytes = {} as Record<K, number>;
    for (const name of names) await render(scenarios[name]); // warm-up, not recorded
    for (let round = 0; round < rounds; round++) {
      for (let i = 0; i < names.length; i++) {
        const name = names[(round + i) % names.length]!;
        const started = performance.now();
        bytes[name] = await render(scenarios[name]);
        samples[name].push(performance.now() - started);
      }
    }
    return { samples, bytes };
  };

  const formats = await alternate(
    {
      png: { url: "/showcase", ...VIEWPORT },
      webp: { url: "/showcase", ...VIEWPORT, format: "webp" },
      avif: { url: "/showcase", ...VIEWPORT, format: "avif" },
    },
    options.rounds,
  );
  const tall = { width: 400, deviceScaleFactor: 2, fullPage: true };
  const sizes = await alternate({ single: { url: "/bands?n=4", ...tall }, tiled: { url: "/bands?n=20", ...tall } }, Math.max(5, Math.ceil(options.rounds / 2)));
  const mpx = { single: (800 * 8_000) / 1e6, tiled: (800 * 40_000) / 1e6 };

  const results = {
    formats: Object.fromEntries((["png", "webp", "avif"] as const).map((name) => [name, { ...stats(formats.samples[name]), bytes: formats.bytes[name] }])),
    tall_pages: Object.fromEntries(
      (["single", "tiled"] as const).map((name) => {
        const figures = stats(sizes.samples[name]);
        return [name, { ...figures, mpx: mpx[name], ms_per_mpx: Math.round(figures.p50_ms / mpx[name]) }];
      }),
    ),
  };
  const ratio = (a: number, b: number) => Number((a / b).toFixed(2));
  const ratios = {
    webp_vs_png_time: ratio(results.formats.webp!.p50_ms, results.formats.png!.p50_ms),
    webp_vs_png_bytes: ratio(results.formats.webp!.bytes, results.formats.png!.bytes),
    avif_vs_png_time: ratio(results.formats.avif!.p50_ms, results.formats.png!.p50_ms),
    avif_vs_png_bytes: ratio(results.formats.avif!.bytes, results.formats.png!.bytes),
    tiled_vs_single_ms_per_mpx: ratio(results.tall_pages.tiled!.ms_per_mpx, results.tall_pages.single!.ms_per_mpx),
  };
  const print = () => {
    for (const [name, figures] of Object.entries(results.formats)) {
      console.log(
        `${name.padEnd(16)} p50 ${String(figures.p50_ms).padStart(5)} ms   ${String(Math.round(figures.bytes / 1024)).padStart(5)} KB   (/showcase 1280x800 at 2x)`,
      );
    }
    console.log(
      `webp_vs_png time ${ratios.webp_vs_png_time}, bytes ${ratios.webp_vs_png_bytes}; avif_vs_png time ${ratios.avif_vs_png_time}, bytes ${ratios.avif_vs_png_bytes}`,
    );
    for (const [name, figures] of Object.entries(results.tall_pages)) {
      console.log(`${`full page ${name}`.padEnd(20)} p50 ${String(figures.p50_ms).padStart(5)} ms for ${figures.mpx} Mpx: ${figures.ms_per_mpx} ms/Mpx`);
    }
    console.log(`tiled_vs_single_ms_per_mpx ${ratios.tiled_vs_single_ms_per_mpx}`);
  };
  return { results, ratios, print };
}
