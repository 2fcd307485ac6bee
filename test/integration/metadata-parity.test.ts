// Our head reading against Chromium's own parser, on documents generated from the shapes real heads
// have (tracking pixels in noscript, comments, templates, scripts that mention tags, stray elements
// and text, tags between </head> and <body>, SVG titles): for each, the title must be document.title
// and the description the one in document.head. Not generated: markup before <head> and a byte order
// mark in it, where we read on past where a browser ends the head (docs/api.md; tested in
// test/unit/metadata/parse.test.ts).
import fc from "fast-check";
import puppeteer, { type Browser } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { quietChromium } from "../../dev/harness/browser.js";
import { MetadataCollector } from "../../lib/metadata/parse.js";

// Each piece carries its own number, so that which title or description was taken is visible.
const HEAD_PIECES: ((n: number) => string)[] = [
  () => `<meta charset="utf-8">`,
  (n) => `<title>Title ${n}</title>`,
  (n) => `<meta name="description" content="Description ${n}">`,
  () => `<noscript><img height="1" width="1" src="/pixel.gif"></noscript>`,
  () => `<noscript><iframe src="/ns.html" height="0" width="0"></iframe></noscript>`,
  (n) => `<noscript><title>Noscript ${n}</title><meta name="description" content="Noscript ${n}"></noscript>`,
  (n) => `<!-- <title>Comment ${n}</title><meta name="description" content="Comment ${n}"> -->`,
  (n) => `<!--[if IE]><meta name="description" content="IE ${n}"><![endif]-->`,
  (n) => `<!--[if !IE]><!--><meta name="description" content="Revealed ${n}"><!--<![endif]-->`,
  (n) => `<template><title>Template ${n}</title><meta name="description" content="Template ${n}"></template>`,
  (n) => `<script>var s = "<title>Script ${n}</title></head><body>";</script>`,
  () => `<style>/* </head><body> */ p { color: red }</style>`,
  () => `<link rel="icon" href="/icon.png"><base href="/base/">`,
  (n) => `<svg width="1" height="1"><title>SVG ${n}</title></svg>`,
  (n) => `<div>Stray ${n}</div>`,
  (n) => `Stray text ${n}`,
  () => "\n  ",
  () => "</head>",
  () => "<body>",
  (n) => `<h1>Heading ${n}</h1>`,
];

const documents = fc
  .record({
    doctype: fc.boolean(),
    lang: fc.boolean(),
    pieces: fc.array(fc.nat({ max: HEAD_PIECES.length - 1 }), { maxLength: 14 }),
  })
  .map(
    ({ doctype, lang, pieces }) =>
      `${doctype ? "<!doctype html>" : ""}<html${lang ? ' lang="en"' : ""}><head>${pieces.map((p, i) => HEAD_PIECES[p]!(i)).join("")}<p>The end.</p></html>`,
  );

function ours(html: string) {
  const collector = new MetadataCollector();
  collector.write(html);
  collector.end();
  return { title: collector.raw.title, description: collector.raw.meta.get("description") ?? null };
}

describe("metadata parity with Chromium's parser", () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await puppeteer.launch({ ...(await quietChromium()), pipe: true });
  });
  afterAll(() => browser?.close());

  it("answers document.title and document.head's description for generated heads", async () => {
    const page = await browser.newPage();
    // Scripting stays on (it decides how <noscript> parses); the pieces' scripts do nothing.
    await fc.assert(
      fc.asyncProperty(documents, async (html) => {
        await page.setContent(html, { waitUntil: "load" });
        const chromium = await page.evaluate(() => ({
          title: document.title,
          description: document.head.querySelector<HTMLMetaElement>('meta[name="description"]')?.content ?? null,
        }));
        expect(ours(html), html).toEqual(chromium);
      }),
      { numRuns: 150, seed: 20_261_123 },
    );
  }, 120_000);
});
