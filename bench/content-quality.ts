import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { Readability } from "@mozilla/readability";
import { JSDOM, VirtualConsole } from "jsdom";
import { mainText } from "../lib/content/extract.js";

// Main-content quality on real pages with independent ground truth: the article extraction
// benchmark of Zyte (scrapinghub/article-extraction-benchmark, MIT; its 181 pages and their
// article bodies are in bench/corpus/). The score is theirs (evaluate.py): F1 over 4-token shingles
// of our text against the true article body, precision and recall averaged over pages.

const CORPUS = path.join(path.dirname(fileURLToPath(import.meta.url)), "corpus", "article-extraction-benchmark");

// A second corpus, held out from all tuning: the 257 article pages of the test split of WCXB (Murrough
// Foley's Web Content eXtraction Benchmark, CC-BY-4.0, bench/corpus/wcxb-test-articles/), with their
// main content and, for each, snippets a correct extraction must include and must leave out.
const WCXB = path.join(path.dirname(fileURLToPath(import.meta.url)), "corpus", "wcxb-test-articles");

/** WCXB's held-out article pages: HTML, URL, main content, and the snippets to find and to leave out. */
function loadWcxb(): { url: string; html: string; body: string; with: string[]; without: string[] }[] {
  const truth = JSON.parse(gunzipSync(readFileSync(path.join(WCXB, "ground-truth.json.gz"))).toString("utf8")) as Record<
    string,
    { url: string; main_content: string; with: string[]; without: string[] }
  >;
  return Object.entries(truth)
    .filter(([, page]) => page.main_content)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([id, page]) => ({
      url: page.url,
      html: gunzipSync(readFileSync(path.join(WCXB, "html", `${id}.html.gz`))).toString("utf8"),
      body: page.main_content,
      with: page.with ?? [],
      without: page.without ?? [],
    }));
}

// A third, of other kinds of pages and languages: a fixed sample of 300 of trafilatura's 990
// annotated evaluation pages (Apache-2.0, bench/corpus/trafilatura-eval-sample/), scored as
// trafilatura scores them. Shotline's extractor was tuned on all 990 (never on WCXB's test split).
const TRAFILATURA = path.join(path.dirname(fileURLToPath(import.meta.url)), "corpus", "trafilatura-eval-sample");

/** A page's bytes as text: UTF-8, else the charset its markup declares (windows-1252 when none or unknown). */
function decodePage(bytes: Buffer): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    const declared = /charset=["']?([\w-]+)/i.exec(bytes.subarray(0, 4096).toString("latin1"))?.[1];
    try {
      return new TextDecoder(declared ?? "windows-1252").decode(bytes);
    } catch {
      return new TextDecoder("windows-1252").decode(bytes);
    }
  }
}

/** The trafilatura sample: each page's HTML and URL, and the snippets to find and to leave out. */
function loadTrafilatura(): { url: string; html: string; with: string[]; without: string[] }[] {
  const truth = JSON.parse(gunzipSync(readFileSync(path.join(TRAFILATURA, "ground-truth.json.gz"))).toString("utf8")) as Record<
    string,
    { url: string; with: string[]; without: string[] }
  >;
  return Object.entries(truth)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([id, page]) => ({ ...page, html: decodePage(gunzipSync(readFileSync(path.join(TRAFILATURA, "html", `${id}.html.gz`)))) }));
}

/** `value` with its runs of whitespace as one space, trimmed: how both snippet scores compare text. */
const collapse = (value: string) => value.replace(/\s+/g, " ").trim();

/** Trafilatura's score (tests/eval_common.py): snippets as substrings once spaces are collapsed, summed over all pages. */
function snippetScore(pages: readonly { with: string[]; without: string[] }[], texts: readonly string[]) {
  let tp = 0;
  let fp = 0;
  let fn = 0;
  pages.forEach((page, i) => {
    const text = collapse(texts[i]!);
    const found = page.with.filter((snippet) => text.includes(collapse(snippet))).length;
    tp += found;
    fn += page.with.length - found;
    fp += page.without.filter((snippet) => text.includes(collapse(snippet))).length;
  });
  const precision = tp / (tp + fp);
  const recall = tp / (tp + fn);
  return { f1: (2 * precision * recall) / (precision + recall), precision, recall };
}

/** Readability.js's article text (jsdom's DOM), as the usual Node reader gets it; "" when it finds none or throws. */
function readabilityText(html: string, url: string): string {
  try {
    const dom = new JSDOM(html, { url, virtualConsole: new VirtualConsole() });
    const text = new Readability(dom.window.document).parse()?.textContent ?? "";
    dom.window.close();
    return text;
  } catch {
    return "";
  }
}

/** The share of `snippets` found in `text` (whitespace and case aside). */
function found(snippets: readonly string[], text: string): number | null {
  if (snippets.length === 0) return null;
  const squash = (value: string) => collapse(value).toLowerCase();
  const haystack = squash(text);
  return snippets.filter((snippet) => haystack.includes(squash(snippet))).length / snippets.length;
}

/** The corpus: each page's HTML, URL and true article body. */
export function loadCorpus(): { id: string; url: string; html: string; body: string }[] {
  const truth = JSON.parse(readFileSync(path.join(CORPUS, "ground-truth.json"), "utf8")) as Record<string, { articleBody: string; url: string }>;
  return readdirSync(path.join(CORPUS, "html"))
    .filter((file) => file.endsWith(".html.gz"))
    .sort()
    .map((file) => {
      const id = file.replace(".html.gz", "");
      return { id, url: truth[id]!.url, html: gunzipSync(readFileSync(path.join(CORPUS, "html", file))).toString("utf8"), body: truth[id]!.articleBody };
    });
}

const tokens = (text: string) => text.match(/[\p{L}\p{N}_]+/gu) ?? [];

function shingles(text: string): Map<string, number> {
  const words = tokens(text);
  const counts = new Map<string, number>();
  for (let i = 0; i < Math.max(1, words.length - 3); i++) {
    const key = words.slice(i, i + 4).join(" ");
    if (key) counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

/** One page's true positives, false positives and false negatives, normalised to sum to 1 (evaluate.py's string_shingle_matching). */
function matching(truth: string, predicted: string): [number, number, number] {
  const t = shingles(truth);
  const p = shingles(predicted);
  let tp = 0;
  let fp = 0;
  let fn = 0;
  for (const key of new Set([...t.keys(), ...p.keys()])) {
    const a = t.get(key) ?? 0;
    const b = p.get(key) ?? 0;
    tp += Math.min(a, b);
    fp += Math.max(0, b - a);
    fn += Math.max(0, a - b);
  }
  const sum = tp + fp + fn;
  return sum > 0 ? [tp / sum, fp / sum, fn / sum] : [0, 0, 0];
}

const precision = ([tp, fp, fn]: readonly [number, number, number]) => (fp === 0 && fn === 0 ? 1 : tp === 0 && fp === 0 ? 0 : tp / (tp + fp));
const recall = ([tp, fp, fn]: readonly [number, number, number]) => (fp === 0 && fn === 0 ? 1 : tp === 0 && fn === 0 ? 0 : tp / (tp + fn));
const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;

/** F1, precision and recall of `extract` (HTML and URL to text) over the corpus, and each page's F1. */
function scoreExtractor(corpus: ReturnType<typeof loadCorpus>, extract: (html: string, url: string) => string) {
  return scoreTexts(corpus.map((page) => [page.body, extract(page.html, page.url)] as const));
}

/** F1, precision and recall over pages of [true article body, extracted text], and each page's F1 (evaluate.py's averages). */
export function scoreTexts(pages: readonly (readonly [truth: string, predicted: string])[]) {
  const results = pages.map(([truth, predicted]) => matching(truth, predicted));
  const p = mean(results.filter(([tp, fp]) => tp + fp > 0).map(precision));
  const r = mean(results.filter(([tp, , fn]) => tp + fn > 0).map(recall));
  const perPage = results.map((m) => {
    const pp = precision(m);
    const rr = recall(m);
    return pp + rr > 0 ? (2 * pp * rr) / (pp + rr) : 0;
  });
  return { f1: (2 * p * r) / (p + r), precision: p, recall: r, perPage };
}

/**
 * The bench's content quality: our main text's F1, precision and recall on Zyte's corpus, and the
 * time per page; Readability.js's on the same pages; both on WCXB's held-out articles, with the
 * share of their must-find snippets found and of their must-not snippets left out; and both on the
 * trafilatura sample, scored by its snippets.
 */
export function benchContentQuality() {
  const corpus = loadCorpus();
  const started = performance.now();
  const { f1, precision: p, recall: r } = scoreExtractor(corpus, (html) => mainText(html));
  const msPerPage = (performance.now() - started) / corpus.length;
  const round = (value: number) => Math.round(value * 1000) / 1000;
  const scored = (score: { f1: number; precision: number; recall: number }) => ({
    f1: round(score.f1),
    precision: round(score.precision),
    recall: round(score.recall),
  });
  const readability = scored(scoreExtractor(corpus, readabilityText));
  const wcxb = loadWcxb();
  const onWcxb = (extract: (html: string, url: string) => string) => {
    const texts = wcxb.map((page) => extract(page.html, page.url));
    const mean = (values: (number | null)[]) => {
      const known = values.filter((v): v is number => v !== null);
      return round(known.reduce((a, b) => a + b, 0) / known.length);
    };
    return {
      ...scored(scoreTexts(wcxb.map((page, i) => [page.body, texts[i]!] as const))),
      snippets_found: mean(wcxb.map((page, i) => found(page.with, texts[i]!))),
      boilerplate_left_out: mean(wcxb.map((page, i) => (page.without.length ? 1 - found(page.without, texts[i]!)! : null))),
    };
  };
  const wcxbOurs = onWcxb((html) => mainText(html));
  const wcxbReadability = onWcxb(readabilityText);
  const trafilatura = loadTrafilatura();
  const trafilaturaOurs = scored(
    snippetScore(
      trafilatura,
      trafilatura.map((page) => mainText(page.html)),
    ),
  );
  const trafilaturaReadability = scored(
    snippetScore(
      trafilatura,
      trafilatura.map((page) => readabilityText(page.html, page.url)),
    ),
  );
  return {
    ratios: {
      content_f1: round(f1),
      wcxb_f1: wcxbOurs.f1,
      wcxb_snippets_vs_readability: round(wcxbOurs.snippets_found / wcxbReadability.snippets_found),
      trafilatura_precision_vs_readability: round(trafilaturaOurs.precision / trafilaturaReadability.precision),
      trafilatura_recall_vs_readability: round(trafilaturaOurs.recall / trafilaturaReadability.recall),
    },
    results: {
      pages: corpus.length,
      f1: round(f1),
      precision: round(p),
      recall: round(r),
      ms_per_page: Math.round(msPerPage * 10) / 10,
      readability,
      wcxb_test_articles: { pages: wcxb.length, ours: wcxbOurs, readability: wcxbReadability },
      trafilatura_eval_sample: { pages: trafilatura.length, ours: trafilaturaOurs, readability: trafilaturaReadability },
    },
  };
}
