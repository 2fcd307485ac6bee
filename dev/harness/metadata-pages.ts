import type http from "node:http";
import { gzipSync } from "node:zlib";
import iconv from "iconv-lite";

// Fixture pages for metadata extraction, served under /meta/ by the fixture server (fixtures.ts),
// also used by `npm run bench`. Each exercises one rule of docs/api.md's fallbacks or one piece of
// real-world markup.

type Page = { status?: number; type?: string; body: string | Buffer; headers?: Record<string, string> };

const doc = (head: string, body = "<p>Some text.</p>") => `<!doctype html><html><head>${head}</head><body>${body}</body></html>`;

// Body text like an article page: enough that a whole-document parse costs what it does on real pages.
const ARTICLE_BODY = Array.from(
  { length: 800 },
  (_, i) =>
    `<div class="row r${i}"><a href="/story/${i}" class="link">Story ${i}</a><p class="summary">Paragraph ${i} of a long article &mdash; with <b>markup</b>, <i>entities</i> &amp; links <a href="/tag/${i}">tag</a>.</p><img src="/img/${i}.jpg" alt="picture ${i}" loading="lazy"></div>`,
).join("\n");

const FULL_HEAD = `<meta charset="utf-8"><title>  Full   page &amp; more </title>
<meta name="description" content="The description.">
<meta property="og:title" content="OG title"><meta property="og:description" content="OG description">
<meta property="og:image" content="/images/og.png"><meta name="twitter:title" content="Twitter title">
<meta name="twitter:image" content="/images/twitter.png"><meta name="theme-color" content="#0ea5e9">
<link rel="icon" href="/favicon-32.png" sizes="32x32"><link rel="apple-touch-icon" href="/apple.png">
<link rel="stylesheet" href="/style.css"><script src="/app.js" defer></script>`;

// A real page's head carries more than tags: inline critical CSS, JSON-LD, analytics snippets (~12 KB here).
const REAL_HEAD = `${FULL_HEAD}
<style>${Array.from({ length: 120 }, (_, i) => `.c${i}{margin:${i}px;padding:${i % 7}px;color:#${(i * 4099).toString(16).padStart(6, "0").slice(0, 6)}}`).join("")}</style>
<script type="application/ld+json">${JSON.stringify({ "@context": "https://schema.org", "@type": "NewsArticle", headline: "OG title", author: Array.from({ length: 20 }, (_, i) => ({ "@type": "Person", name: `Author ${i}` })) })}</script>
<script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments)}gtag("js",new Date());${"/* tracking */".repeat(200)}</script>`;

/** A realistic page: REAL_HEAD, then about `kb` KB of article body. */
const realPage = (kb: number) => doc(REAL_HEAD, ARTICLE_BODY.slice(0, kb * 1024));

// What issue #20's pages had after their tracking pixel: every field a head gives.
const TAIL_HEAD = `<title>After the pixel</title><base href="/meta/assets/"><meta name="description" content="Still in the head.">
<meta property="og:title" content="OG after"><meta property="og:image" content="og.png"><meta name="theme-color" content="#ff6600">`;

// Google Tag Manager's snippet as its docs give it, the <noscript> part misplaced into the head as it often is.
const TAG_MANAGER = `<!-- Google Tag Manager -->
<script>(function(w,d,s,l,i){w[l]=w[l]||[];w[l].push({'gtm.start':new Date().getTime(),event:'gtm.js'});var f=d.getElementsByTagName(s)[0],
j=d.createElement(s),dl=l!='dataLayer'?'&l='+l:'';j.async=true;j.src='https://www.googletagmanager.com/gtm.js?id='+i+dl;if(f)f.parentNode.insertBefore(j,f);
})(window,document,'script','dataLayer','GTM-XXXX');</script>
<!-- End Google Tag Manager -->`;
const TAG_MANAGER_BODY = `<noscript><iframe src="https://www.googletagmanager.com/ns.html?id=GTM-XXXX" height="0" width="0" style="display:none;visibility:hidden"></iframe></noscript>`;

// Every field beyond the interface document's, from its first source.
const RICH_HEAD = `<meta charset="utf-8"><title>Rich</title>
<link rel="canonical" href="/articles/rich"><meta property="og:url" content="https://elsewhere.example.test/">
<meta property="og:site_name" content="The Fixture Times"><meta name="application-name" content="Fixture App">
<meta property="og:type" content="article"><meta name="author" content="Ada Lovelace"><meta property="article:author" content="https://facebook.example.test/ada">
<meta property="article:published_time" content="2026-11-20T08:30:00+01:00"><meta property="article:modified_time" content="2026-11-21">
<meta name="twitter:card" content="summary_large_image"><meta name="twitter:site" content="@fixture">
<meta property="og:image" content="/images/hero.jpg"><meta property="og:image:width" content="1200"><meta property="og:image:height" content="630">
<meta property="og:image:alt" content="A hero image"><meta property="og:image" content="/images/second.jpg"><meta property="og:image:width" content="10">
<link rel="icon" href="/favicon-32.png" sizes="32x32"><link rel="alternate" type="application/rss+xml" href="/feed.xml" title="RSS">
<link rel="alternate" type="application/atom+xml" href="https://feeds.example.test/atom"><link rel="alternate" type="application/rss+xml" href="/feed.xml">
<link rel="alternate" hreflang="fr" href="/fr/"><link rel="alternate" type="application/feed+json" href="feed.json">
<script type="application/ld+json">{"@context":"https://schema.org","@type":"Organization","name":"Org","logo":"/images/logo.png"}</script>`;

// The same fields from their fallbacks: og:locale, og:url, og:updated_time, JSON-LD (an @graph with references).
const RICH_FALLBACK_HEAD = `<meta charset="utf-8"><title>Fallbacks</title><meta property="og:locale" content="pt_BR">
<meta property="og:url" content="https://www.example.test/post">
<meta property="article:author" content="https://facebook.example.test/ada"><meta property="og:updated_time" content="2026-11-22T10:00:00Z">
<meta name="twitter:image" content="/card.png"><meta name="twitter:image:alt" content="The card"><meta property="og:image:alt" content="Not this one">
<link rel="apple-touch-icon" href="/apple.png">
<script type="application/ld+json">{ "broken": </script>
<script type="application/ld+json">{"@context":"https://schema.org","@graph":[
{"@type":"WebPage","@id":"https://www.example.test/post#page","datePublished":"2026-11-19T07:00:00+00:00","dateModified":"2026-11-22T09:00:00+00:00"},
{"@type":["Article"],"author":[{"@id":"https://www.example.test/#/person/1"},{"@type":"Person","name":"Grace Hopper"}],"publisher":{"@id":"https://www.example.test/#org"}},
{"@type":"Person","@id":"https://www.example.test/#/person/1","name":"Ada Lovelace"},
{"@type":"Organization","@id":"https://www.example.test/#org","name":"Example Org","logo":{"@type":"ImageObject","@id":"https://www.example.test/#logo","url":"https://www.example.test/logo.png"}},
{"@type":"WebSite","name":"Example Site"}]}</script>`;

// A head written to hurt a reader: a 200,000-deep JSON-LD array, a script: logo, an impossible date, a
// 5,000-character author, 1,000 feeds, a giant lang and image size, then a <noscript> never closed
// and a megabyte of markup after it.
const HOSTILE_HEAD = `<!doctype html><html lang="${"x".repeat(5_000)}"><head><title>Hostile</title>
<script type="application/ld+json">${"[".repeat(200_000)}${"]".repeat(200_000)}</script>
<script type="application/ld+json">{"@type":"Organization","logo":"javascript:alert(1)"}</script>
<script type="application/ld+json">{"@type":"Article","datePublished":"2026-99-99","author":{"name":"${"A".repeat(5_000)}"}}</script>
${Array.from({ length: 1_000 }, (_, i) => `<link rel="alternate" type="application/rss+xml" href="/feed-${i}.xml">`).join("")}
<meta property="og:image" content="/i.png"><meta property="og:image:width" content="99999999"><meta property="og:image:height" content="-1">
<noscript>${"<div><meta name=description content=hidden>".repeat(25_000)}`;

/** The /meta/ pages, by path after /meta. */
export function metadataPage(path: string): Page | "huge" | null {
  switch (path) {
    case "/full":
      return { body: doc(FULL_HEAD) };
    // Realistic pages (HTML sizes as on the real web): a news article, a blog post, a shop page served gzipped.
    case "/news":
      return { body: realPage(180) };
    case "/blog":
      return { body: realPage(60) };
    case "/shop":
      return { headers: { "content-encoding": "gzip" }, body: gzipSync(realPage(100)) };
    case "/og-only":
      return {
        body: doc(
          `<meta property="og:title" content="Only OG"><meta property="og:description" content="OG says"><meta name="twitter:title" content="Twitter loses">`,
        ),
      };
    case "/twitter-only":
      return {
        body: doc(
          `<meta name="twitter:title" content="Twitter title"><meta name="twitter:description" content="Twitter says"><meta name="twitter:image" content="card.png">`,
        ),
      };
    case "/h1-only":
      return { body: doc(`<meta charset="utf-8">`, `<header><h1>  The <em>heading</em>  </h1></header>${ARTICLE_BODY}`) };
    case "/nothing":
      return { body: doc("", "<p>Plain text and nothing else on this page, written by hand.</p>") };
    case "/sub/relative":
      return {
        body: doc(`<title>Relative</title><meta property="og:image" content="//cdn.example.test/og.png">
<link rel="icon" href="../icons/icon.png"><link rel="manifest" href="site.webmanifest">`),
      };
    case "/base":
      return { body: doc(`<base href="/static/v2/"><title>Base</title><meta property="og:image" content="img/og.png"><link rel="icon" href="icon.svg">`) };
    case "/duplicates":
      return {
        body: doc(`<title> </title><title>A second title is not the title</title><meta name="description" content="  "><meta name="description" content="Second description wins">
<meta property="og:title" content=""><meta property="og:title" content="Real OG title"><meta property="og:title" content="Third">
<meta name="theme-color" media="(prefers-color-scheme: dark)" content="#000000"><meta name="theme-color" content="#ffffff">`),
      };
    case "/secure-url":
      return {
        body: doc(
          `<title>Secure</title><meta property="og:image" content="http://img.example.test/a.png"><meta property="og:image:secure_url" content="https://img.example.test/a.png">`,
        ),
      };
    case "/icons-sized":
      return {
        body: doc(`<title>Icons</title><link rel="apple-touch-icon" href="/apple-180.png"><link rel="shortcut icon" href="/fav.ico">
<link rel="icon" type="image/png" sizes="16x16 192x192" href="/icon-192.png"><link rel="mask-icon" href="/mask.svg">`),
      };
    case "/sub/site.webmanifest":
      return { type: "application/manifest+json", body: JSON.stringify({ name: "Fixture", theme_color: "#7c3aed" }) };
    case "/shift-jis":
      return {
        type: "text/html",
        body: iconv.encode(doc(`<meta charset="Shift_JIS"><title>日本語のタイトル</title><meta name="description" content="説明文です">`), "shift_jis"),
      };
    case "/latin1":
      // The charset only in the header; bytes in ISO-8859-1 (0xE9 = é), plus entities.
      return {
        type: "text/html; charset=ISO-8859-1",
        body: iconv.encode(
          doc(`<title>Caf\u00e9 cr\u00e8me</title><meta name="description" content="Na&iuml;ve &lt;r&eacute;sum&eacute;&gt; &#x2014; ok">`),
          "latin1",
        ),
      };
    case "/gzip":
      return { headers: { "content-encoding": "gzip" }, body: gzipSync(doc(`<title>Compressed</title>`)) };
    case "/script-rendered":
      return {
        body: doc(
          `<meta charset="utf-8"><link rel="icon" href="/spa.png">`,
          `<div id="root"></div><noscript>You need to enable JavaScript to run this app.</noscript>
<script>
setTimeout(() => {
  document.title = "Rendered by script";
  const m = document.createElement("meta"); m.name = "description"; m.content = "Drawn in the browser"; document.head.appendChild(m);
  const o = document.createElement("meta"); o.setAttribute("property", "og:image"); o.content = "/rendered.png"; document.head.appendChild(o);
  document.getElementById("root").innerHTML = "<h1>App</h1>";
}, 50);
</script>`,
        ),
      };
    // Head shapes that real pages have and that end a naive parser's head early (issue #20's corpus).
    case "/noscript-pixel":
      return {
        body: doc(
          `<meta charset="utf-8"><noscript><img height="1" width="1" style="display:none" src="https://www.facebook.com/tr?id=1&amp;ev=PageView&amp;noscript=1"></noscript>${TAIL_HEAD}`,
        ),
      };
    case "/tag-manager":
      return { body: doc(`${TAG_MANAGER}${TAIL_HEAD}`, `${TAG_MANAGER_BODY}<p>Text.</p>`) };
    case "/stray-before-head":
      // As a "save page" extension leaves it: markup before <head> (a browser starts the body there).
      return {
        body: `<!DOCTYPE html><html><div id="saved-from">Saved from https://news.example.test/</div><head>${TAIL_HEAD}</head><body><p>Text.</p></body></html>`,
      };
    case "/svg-title":
      // No <title> in the head; an inline SVG logo's <title> is not the document's, a later <title> is.
      return {
        body: doc(
          `<meta property="og:title" content="OG title">`,
          `<svg viewBox="0 0 10 10"><title>Company logo</title><circle r="5"/></svg><h1>Heading</h1><p>Text.</p><title>Late title</title>`,
        ),
      };
    case "/comments":
      return {
        body: doc(`<title>Comments</title><!--[if lt IE 9]><meta name="description" content="IE only"><![endif]-->
<!--[if !IE]><!--><meta name="description" content="Real description"><!--<![endif]-->
<!-- <meta property="og:image" content="/commented-out.png"> --><!--><meta property="og:image" content="/real.png">
<!-- a comment with a <body> tag in it --><meta name="theme-color" content="#123456">`),
      };
    case "/rich":
      return { body: doc(RICH_HEAD).replace("<html>", '<html lang="en-gb">') };
    case "/rich-fallbacks":
      return { body: doc(RICH_FALLBACK_HEAD) };
    case "/hostile-head":
      return { body: HOSTILE_HEAD };
    case "/huge":
      return "huge";
    default:
      return null;
  }
}

/**
 * Streams a huge page (a head, then megabytes of body) and calls `done` with the bytes it managed to
 * write before the client hung up. `title=0` leaves the title out, so only the byte cap stops a reader.
 */
export function serveHugePage(response: http.ServerResponse, query: URLSearchParams, done: (bytesWritten: number) => void) {
  const total = Number(query.get("mb") ?? 100) * 1024 * 1024;
  const head = query.get("title") === "0" ? "<meta charset=utf-8>" : "<title>Huge page</title>";
  const chunk = Buffer.from(`<div>${"filler text ".repeat(5000)}</div>\n`);
  let written = 0;
  response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
  response.write(`<!doctype html><html><head>${head}</head><body>`);
  const pump = () => {
    while (written < total && !response.destroyed) {
      written += chunk.length;
      if (!response.write(chunk)) return void response.once("drain", pump);
    }
    response.end();
  };
  response.once("close", () => done(written));
  pump();
}
