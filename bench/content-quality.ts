import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { mainText } from "../lib/content/extract.js";

// Main-content quality on real pages with independent ground truth: the article extraction
// benchmark of Zyte (scrapinghub/article-extraction-benchmark, MIT; its 181 pages and their
// article bodies are in bench/corpus/). The score is theirs (evaluate.py): F1 over 4-token shingles
// of our text against the true article body, precision and recall averaged over pages.

const CORPUS = path.join(path.dirname(fileURLToPath(import.meta.url)), "corpus", "article-extraction-benchmark");

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

/** The bench's content quality: our main text's F1, precision and recall on the corpus, and the time per page. */
export function benchContentQuality() {
  const corpus = loadCorpus();
  const started = performance.now();
  const { f1, precision: p, recall: r } = scoreExtractor(corpus, (html) => mainText(html));
  const msPerPage = (performance.now() - started) / corpus.length;
  const round = (value: number) => Math.round(value * 1000) / 1000;
  return {
    ratios: { content_f1: round(f1) },
    results: { pages: corpus.length, f1: round(f1), precision: round(p), recall: round(r), ms_per_page: Math.round(msPerPage * 10) / 10 },
  };
}
