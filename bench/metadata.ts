// Metadata in `npm run bench`: the same fixture pages (served on 127.0.0.1) through
//   metadata          our extraction in process (lib/metadata: guarded fetch, streaming parse)
//   metadata_service  POST /api/v1/metadata through the whole local stack with a key (HTTP, key, rate
//                     limit, the balance read for X-Balance-Micro-USD)
//   metadata_anonymous  the same without a key (limited per client IP; the stack's limit is raised for the bench)
//   metascraper       metascraper with the rules for our fields (title, description, image, logo, lang,
//                     author, dates, publisher, url, feed), on HTML fetched with fetch()
//   open_graph_scraper  open-graph-scraper, which fetches by itself
// and how often each peer agrees with our answer, field by field.
import createMetascraper from "metascraper";
import metascraperAuthor from "metascraper-author";
import metascraperDate from "metascraper-date";
import metascraperDescription from "metascraper-description";
import metascraperFeed from "metascraper-feed";
import metascraperImage from "metascraper-image";
import metascraperLang from "metascraper-lang";
import metascraperLogo from "metascraper-logo";
import metascraperPublisher from "metascraper-publisher";
import metascraperTitle from "metascraper-title";
import metascraperUrl from "metascraper-url";
import ogs from "open-graph-scraper";
import { type Sample, stats } from "./stats.js";

// The ratio is taken over pages of the sizes real pages have (HTML of 60-180 KB with a ~12 KB head,
// one gzipped). Markup cases are timed per page and compared field by field too: relative URLs +
// manifest, Shift_JIS, and a ~1 KB page (where every tool is bound by the fetch).
const REALISTIC_PAGES = ["/meta/news", "/meta/blog", "/meta/shop"];
// Plus the head shapes of issue #20 and the richer fields (compared, and timed per page).
const METADATA_PAGES = [
  ...REALISTIC_PAGES,
  "/meta/sub/relative",
  "/meta/shift-jis",
  "/meta/full",
  "/meta/noscript-pixel",
  "/meta/tag-manager",
  "/meta/stray-before-head",
  "/meta/comments",
  "/meta/rich",
  "/meta/rich-fallbacks",
];

type Fields = Record<string, unknown>;

// Which of our fields each peer answers, and under which name. Values are compared as written, except
// dates (the same instant), languages (the same primary language: metascraper answers "en") and feeds
// (metascraper answers one: our first).
const PEER_FIELDS = {
  metascraper: {
    title: "title",
    description: "description",
    ogImage: "image",
    logo: "logo",
    lang: "lang",
    author: "author",
    publishedTime: "datePublished",
    modifiedTime: "dateModified",
    siteName: "publisher",
    canonical: "url",
    feeds: "feed",
  },
  open_graph_scraper: {
    ogTitle: "ogTitle",
    ogDescription: "ogDescription",
    ogImage: "ogImage",
    favicon: "favicon",
    lang: "ogLocale",
    canonical: "ogUrl",
    siteName: "ogSiteName",
    type: "ogType",
    author: "author",
    publishedTime: "articlePublishedTime",
    modifiedTime: "articleModifiedTime",
    twitterCard: "twitterCard",
    twitterSite: "twitterSite",
    ogImageWidth: "ogImageWidth",
    ogImageHeight: "ogImageHeight",
    ogImageAlt: "ogImageAlt",
  },
} as const;
type Peer = keyof typeof PEER_FIELDS;

/** A field's value in comparable form; absent (null, undefined, "", []) is one value. */
function comparable(field: string, value: unknown): string | null {
  if (Array.isArray(value)) value = value[0];
  if (value === null || value === undefined || value === "") return null;
  if (field === "publishedTime" || field === "modifiedTime") {
    const time = Date.parse(String(value));
    return Number.isNaN(time) ? String(value) : new Date(time).toISOString();
  }
  if (field === "lang") return String(value).split(/[-_]/)[0]!.toLowerCase();
  return String(value);
}

export async function benchMetadata(options: { fixturesUrl: string; serviceUrl: string; apiKey: string; rounds: number }) {
  // Our extraction in this process may reach the fixture server (as the service's config allows).
  process.env.ALLOWED_PRIVATE_HOSTS = new URL(options.fixturesUrl).host;
  const { extractMetadata } = await import("../lib/metadata/extract.js");
  const metascraper = createMetascraper([
    metascraperTitle(),
    metascraperDescription(),
    metascraperImage(),
    metascraperLogo(),
    metascraperLang(),
    metascraperAuthor(),
    metascraperDate({ datePublished: true, dateModified: true }),
    metascraperPublisher(),
    metascraperUrl(),
    metascraperFeed(),
  ]);

  const viaHttp = async (url: string, headers: Record<string, string>): Promise<Fields> => {
    const res = await fetch(`${options.serviceUrl}/api/v1/metadata`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify({ url }),
    });
    if (res.status !== 200) throw new Error(`service answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as Fields;
  };
  const scenarios = {
    metadata: async (url: string): Promise<Fields> => ({ ...(await extractMetadata(url, { at: Date.now() + 30_000, signal: AbortSignal.timeout(30_000) })) }),
    metadata_service: (url: string) => viaHttp(url, { authorization: `Bearer ${options.apiKey}` }),
    // Without a key: limited per client IP, and no balance to report (X-Balance-Micro-USD costs a keyed answer one read).
    metadata_anonymous: (url: string) => viaHttp(url, {}),
    metascraper: async (url: string): Promise<Fields> => {
      const html = await (await fetch(url)).text();
      return (await metascraper({ html, url })) as Fields;
    },
    open_graph_scraper: async (url: string): Promise<Fields> => {
      const { result } = await ogs({ url });
      const image = result.ogImage?.[0];
      return { ...result, ogImage: image?.url, ogImageWidth: image?.width, ogImageHeight: image?.height, ogImageAlt: image?.alt };
    },
  };
  const names = Object.keys(scenarios) as (keyof typeof scenarios)[];
  // Samples by scenario and page.
  const samples = Object.fromEntries(names.map((n) => [n, Object.fromEntries(METADATA_PAGES.map((p) => [p, [] as Sample]))])) as Record<
    keyof typeof scenarios,
    Record<string, Sample>
  >;
  const answers = new Map<string, Record<string, Fields>>();

  // Warm-up, not recorded; its answers are compared.
  for (const page of METADATA_PAGES) {
    const url = `${options.fixturesUrl}${page}`;
    const byScenario: Record<string, Fields> = {};
    for (const name of names) byScenario[name] = await scenarios[name](url);
    answers.set(page, byScenario);
  }
  for (let round = 0; round < options.rounds; round++) {
    for (const page of METADATA_PAGES) {
      const url = `${options.fixturesUrl}${page}`;
      for (let i = 0; i < names.length; i++) {
        const name = names[(round + i) % names.length]!;
        // The garbage one tool leaves (a 180 KB DOM) is collected before the next is timed, not during.
        (globalThis.gc as ((options: { type: "minor" }) => void) | undefined)?.({ type: "minor" });
        const started = performance.now();
        await scenarios[name](url);
        samples[name][page]!.push(performance.now() - started);
      }
    }
  }

  const timing = Object.fromEntries(
    names.map((n) => [
      n,
      stats(
        REALISTIC_PAGES.flatMap((p) => samples[n][p]!),
        1,
      ),
    ]),
  ) as Record<keyof typeof scenarios, ReturnType<typeof stats>>;
  const perPage = Object.fromEntries(METADATA_PAGES.map((p) => [p, Object.fromEntries(names.map((n) => [n, stats(samples[n][p]!, 1).p50_ms]))]));
  const bestPeer = Math.min(timing.metascraper.p50_ms, timing.open_graph_scraper.p50_ms);
  const ratio = (ours: number) => Number((bestPeer / ours).toFixed(2));
  const ratios = {
    best_peer_vs_metadata: ratio(timing.metadata.p50_ms),
    best_peer_vs_metadata_http: ratio(timing.metadata_service.p50_ms),
    best_peer_vs_metadata_http_anonymous: ratio(timing.metadata_anonymous.p50_ms),
  };

  // Field-by-field agreement.
  const agreement = {} as Record<
    Peer,
    {
      agree: number;
      compared: number;
      /** "agreed/compared" per field. */
      byField: Record<string, string>;
      differences: { page: string; field: string; ours: string | null; theirs: string | null }[];
    }
  >;
  for (const peer of Object.keys(PEER_FIELDS) as Peer[]) {
    const tally: (typeof agreement)[Peer] = { agree: 0, compared: 0, byField: {}, differences: [] };
    const fieldCounts = new Map<string, { agree: number; compared: number }>();
    for (const [page, byScenario] of answers) {
      for (const [ourField, theirField] of Object.entries(PEER_FIELDS[peer])) {
        const ours = comparable(ourField, byScenario.metadata![ourField]);
        const theirs = comparable(ourField, byScenario[peer]![theirField]);
        const counts = fieldCounts.get(ourField) ?? { agree: 0, compared: 0 };
        fieldCounts.set(ourField, counts);
        tally.compared++;
        counts.compared++;
        if (ours === theirs) {
          tally.agree++;
          counts.agree++;
        } else {
          tally.differences.push({ page, field: ourField, ours, theirs });
        }
      }
    }
    for (const [field, { agree, compared }] of fieldCounts) tally.byField[field] = `${agree}/${compared}`;
    agreement[peer] = tally;
  }

  return {
    ratios,
    results: { pages: REALISTIC_PAGES, ...timing, p50_ms_by_page: perPage, agreement },
    print() {
      for (const name of names)
        console.log(
          `${name.padEnd(18)} p50 ${String(timing[name].p50_ms).padStart(6)} ms   p95 ${String(timing[name].p95_ms).padStart(6)} ms   n=${timing[name].n}`,
        );
      for (const [page, byName] of Object.entries(perPage)) console.log(`  p50 ${page.padEnd(20)} ${names.map((n) => `${n} ${byName[n]}`).join("   ")}`);
      console.log(
        `best_peer_vs_metadata ${ratios.best_peer_vs_metadata} (target >= 3)   through HTTP with a key (best_peer_vs_metadata_http): ${ratios.best_peer_vs_metadata_http} (target >= 5), without: ${ratios.best_peer_vs_metadata_http_anonymous}`,
      );
      for (const peer of Object.keys(agreement) as Peer[]) {
        const { agree, compared, byField, differences } = agreement[peer];
        console.log(
          `agreement with ${peer}: ${agree}/${compared} fields (${Object.entries(byField)
            .map(([field, n]) => `${field} ${n}`)
            .join(", ")})`,
        );
        for (const d of differences) console.log(`  ${d.page} ${d.field}: ours ${JSON.stringify(d.ours)}, ${peer} ${JSON.stringify(d.theirs)}`);
      }
    },
  };
}
