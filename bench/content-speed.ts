import { Readability } from "@mozilla/readability";
import { JSDOM, VirtualConsole } from "jsdom";
import TurndownService from "turndown";
import { extractContent } from "../lib/content/extract.js";
import { loadCorpus } from "./content-quality.js";
import { type Sample, stats } from "./stats.js";

// Content speed in `npm run bench`, as ratios measured in the same run:
//   peer_vs_content   p50 per real page (the article-extraction corpus, in memory) of the usual
//                     Node pipeline (jsdom + @mozilla/readability + turndown) over ours (lib/content:
//                     htmlparser2, visible text, main content, Markdown); target >= 5
//   content_vs_metadata_http  p50 of a static POST /api/v1/content (render: "never") over a POST
//                     /api/v1/metadata of the same fixture page (HTTP_PAGE), both through the local
//                     stack with a key; target <= 2; and the same from loopback answering at once

/** The usual Node pipeline: a DOM, Readability's article, turndown's Markdown. */
function peerMarkdown(turndown: TurndownService, html: string, url: string): string {
  // A console of its own: jsdom reports each stylesheet it cannot parse.
  const dom = new JSDOM(html, { url, virtualConsole: new VirtualConsole() });
  const article = new Readability(dom.window.document).parse();
  dom.window.close();
  return article?.content ? turndown.turndown(article.content) : "";
}

/**
 * A page of the sizes real pages have (180 KB), read statically by both routes, served as a real
 * origin serves it: its first byte after 100 ms (CrUX counts a time to first byte under 800 ms as
 * good; 100 ms flatters the origin). The same page from loopback, answering at once, is measured
 * too: there the figure is our own work and the local ledger's (two DynamoDB Local transactions a
 * paid call, ~12 ms each here), which a metadata call does not pay.
 */
const HTTP_PAGE = "/meta/news?ttfb=100";
const LOOPBACK_PAGE = "/meta/news";

export async function benchContentSpeed(options: { fixturesUrl: string; serviceUrl: string; apiKey: string; rounds: number }) {
  const corpus = loadCorpus();
  const turndown = new TurndownService({ headingStyle: "atx", codeBlockStyle: "fenced" });
  const ours: Sample = [];
  const peer: Sample = [];
  // Warm-up (JIT) on a few pages, not recorded; then each page once by each, alternating who goes first.
  for (const page of corpus.slice(0, 5)) {
    extractContent(page.html, page.url, "main", "static").markdown;
    peerMarkdown(turndown, page.html, page.url);
  }
  // A page the peer throws on (jsdom's CSS parser refuses some inline styles) is left out of both samples.
  let peerFailed = 0;
  corpus.forEach((page, i) => {
    const times: Record<"ours" | "peer", number> = { ours: 0, peer: 0 };
    const runs = [
      () => {
        const started = performance.now();
        extractContent(page.html, page.url, "main", "static").markdown;
        times.ours = performance.now() - started;
      },
      () => {
        const started = performance.now();
        peerMarkdown(turndown, page.html, page.url);
        times.peer = performance.now() - started;
      },
    ];
    try {
      for (const run of i % 2 ? runs.reverse() : runs) run();
    } catch {
      peerFailed++;
      return;
    }
    ours.push(times.ours);
    peer.push(times.peer);
  });

  const post = async (path: string, body: unknown) => {
    const started = performance.now();
    const res = await fetch(`${options.serviceUrl}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${options.apiKey}` },
      body: JSON.stringify(body),
    });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${path} answered ${res.status}`);
    return performance.now() - started;
  };
  const overHttp = async (page: string) => {
    const url = `${options.fixturesUrl}${page}`;
    const samples = { content: [] as Sample, metadata: [] as Sample };
    await post("/api/v1/content", { url, render: "never" });
    await post("/api/v1/metadata", { url });
    for (let round = 0; round < options.rounds; round++) {
      samples.content.push(await post("/api/v1/content", { url, render: "never" }));
      samples.metadata.push(await post("/api/v1/metadata", { url }));
    }
    return samples;
  };
  const http = await overHttp(HTTP_PAGE);
  const loopback = await overHttp(LOOPBACK_PAGE);

  const results = {
    pages: ours.length,
    peer_failed: peerFailed,
    ours: stats(ours, 1),
    readability_turndown: stats(peer, 1),
    http_content: stats(http.content, 1),
    http_metadata: stats(http.metadata, 1),
    loopback_content: stats(loopback.content, 1),
    loopback_metadata: stats(loopback.metadata, 1),
  };
  const ratios = {
    peer_vs_content: Number((results.readability_turndown.p50_ms / results.ours.p50_ms).toFixed(2)),
    content_vs_metadata_http: Number((results.http_content.p50_ms / results.http_metadata.p50_ms).toFixed(2)),
    content_vs_metadata_loopback: Number((results.loopback_content.p50_ms / results.loopback_metadata.p50_ms).toFixed(2)),
  };
  return {
    ratios,
    results,
    print: () =>
      console.log(
        `content speed: Markdown p50 ${results.ours.p50_ms} ms a real page vs jsdom + Readability + turndown ${results.readability_turndown.p50_ms} ms (${results.pages} pages; the peer threw on ${peerFailed}): peer_vs_content ${ratios.peer_vs_content} (target >= 5); through HTTP, content p50 ${results.http_content.p50_ms} ms vs metadata ${results.http_metadata.p50_ms} ms on ${HTTP_PAGE}: content_vs_metadata_http ${ratios.content_vs_metadata_http} (target <= 2); from loopback at once ${results.loopback_content.p50_ms} vs ${results.loopback_metadata.p50_ms} ms: content_vs_metadata_loopback ${ratios.content_vs_metadata_loopback}`,
      ),
  };
}
