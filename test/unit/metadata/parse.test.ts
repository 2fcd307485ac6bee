import { describe, expect, it } from "vitest";
import { MAX_JSON_LD_CHARS, MetadataCollector, sniffEncoding } from "../../../lib/metadata/parse.js";

const bytes = (text: string) => Buffer.from(text, "latin1");

describe("sniffEncoding", () => {
  it("follows the HTML order: byte order mark, then the header's charset, then a <meta> in the first 1 KB", () => {
    expect(sniffEncoding(Buffer.from([0xef, 0xbb, 0xbf, 0x3c]), "shift_jis")).toBe("utf-8");
    expect(sniffEncoding(Buffer.from([0xff, 0xfe, 0x3c, 0x00]), undefined)).toBe("utf-16le");
    expect(sniffEncoding(bytes('<meta charset="euc-jp">'), "Shift_JIS")).toBe("shift_jis");
    expect(sniffEncoding(bytes('<meta http-equiv="Content-Type" content="text/html; charset=EUC-JP">'), undefined)).toBe("euc-jp");
    expect(sniffEncoding(bytes(`${" ".repeat(1100)}<meta charset="euc-jp">`), undefined)).toBe("utf-8");
  });

  it("ignores commented-out and unknown declarations; treats Latin-1 labels as windows-1252 and a UTF-16 <meta> as UTF-8", () => {
    expect(sniffEncoding(bytes('<!-- <meta charset="euc-jp"> --><meta charset="gbk">'), undefined)).toBe("gbk");
    expect(sniffEncoding(bytes('<meta charset="no-such-encoding">'), "bogus")).toBe("utf-8");
    expect(sniffEncoding(bytes(""), "ISO-8859-1")).toBe("windows-1252");
    expect(sniffEncoding(bytes('<meta charset="utf-16">'), undefined)).toBe("utf-8");
  });
});

const collect = (...pieces: string[]) => {
  const collector = new MetadataCollector();
  for (const piece of pieces) collector.write(piece);
  return collector;
};
const HEAD_TAGS = `<title>T</title><meta name="description" content="D"><meta property="og:image" content="/i.png"><base href="/b/">`;

describe("MetadataCollector", () => {
  it("is done at the end of the head once it gave a title, and ignores what follows", () => {
    const collector = collect('<html><head><title>T</title><meta property="og:title" content="From OG"><link rel="icon" href="/a.png">');
    expect(collector.done).toBe(false);
    collector.write('</head><body><h1>Heading</h1><meta name="description" content="late">');
    expect(collector.done).toBe(true);
    expect(collector.raw.h1).toBe("");
    expect(collector.raw.meta.has("description")).toBe(false);
  });

  it("reads on to the first h1 when the head has no title, and counts body text and scripts", () => {
    const collector = collect("<title> </title><div id=app>Hi</div><script>var x = 'not text'</script><h1> A <b>b</b> </h1><p>more</p>");
    expect(collector.done).toBe(true);
    expect(collector.raw).toMatchObject({ title: "", h1: "A b", scripts: 1, bodyText: 4 });
  });

  it.each([
    ["a noscript tracking pixel", `<head><noscript><img height="1" src="https://pixel.example/tr"></noscript>${HEAD_TAGS}</head><body>`],
    [
      "a tag manager iframe in noscript",
      `<head><script>(function(){ var t = "<div>"; })()</script><noscript><iframe src="https://gtm.example/ns.html"></iframe></noscript>${HEAD_TAGS}</head><body>`,
    ],
    ["a template", `<head><template><div>card</div><title>not it</title></template>${HEAD_TAGS}</head><body>`],
    ["tags between </head> and <body>", `<head></head>\n<!-- c -->${HEAD_TAGS}<body>`],
    ["an omitted <head>", `<!doctype html><html lang=en>${HEAD_TAGS}<p>`],
    ["a byte order mark from an include", `<head><meta charset=utf-8>\uFEFF${HEAD_TAGS}</head><body>`],
    ["stray markup before <head>", `<!doctype html><html><div>saved</div><head>${HEAD_TAGS}</head><body>`],
    ["stray text before <head>", `<html>Saved page<head>${HEAD_TAGS}</head><body>`],
    [
      "conditional comments",
      `<head><!--[if lt IE 9]><meta name="description" content="IE"><![endif]--><!--[if !IE]><!-->${HEAD_TAGS}<!--<![endif]--></head><body>`,
    ],
  ])("reads the whole head past %s, as a browser does", (_, html) => {
    const collector = collect(html, "<p>body</p>");
    expect(collector.done).toBe(true);
    expect(collector.raw).toMatchObject({ title: "T", baseHref: "/b/" });
    expect(Object.fromEntries(collector.raw.meta)).toEqual({ description: "D", "og:image": "/i.png" });
  });

  it.each([
    ["an element that cannot be in a head", `<head><title>T</title><div>x</div><meta name="description" content="body">`],
    ["text", `<head><title>T</title>stray text<meta name="description" content="body">`],
    ["a noscript after </head>", `<head><title>T</title></head><noscript>x</noscript><meta name="description" content="body">`],
    ["<body>", `<head><title>T</title><body><meta name="description" content="body">`],
  ])("stops where a browser's head ends: at %s", (_, html) => {
    const collector = collect(html);
    expect(collector.done).toBe(true);
    expect(collector.raw.meta.has("description")).toBe(false);
  });

  it("takes document.title's answer: the first <title> anywhere, not an SVG's, not in noscript or template", () => {
    const late = collect(
      `<head><meta property="og:title" content="OG"></head><body><svg><title>Logo</title></svg><noscript><title>N</title></noscript><h1>H</h1>`,
    );
    expect(late.done).toBe(false); // a <title> may still come
    late.write("<p>text</p><title>Late</title>");
    expect(late.done).toBe(true);
    expect(late.raw).toMatchObject({ title: "Late", h1: "H" });
    const none = collect(`<head><meta property="og:title" content="OG"></head><body><svg><title>Logo</title></svg>`);
    none.end();
    expect(none.raw.title).toBe("");
  });

  it("collects lang, canonical, feeds, JSON-LD and the first og:image's own width, height and alt", () => {
    const { raw } = collect(
      `<html lang=" de-AT "><html lang="fr"><head><link rel=canonical href="/c"><link rel="alternate" type="application/rss+xml" href="/rss">`,
      `<link rel="alternate" hreflang="fr" href="/fr"><link rel="ALTERNATE" type="Application/Atom+XML" href="/atom">`,
      `<meta property="og:image" content="/a.png"><meta property="og:image:alt" content="A"><meta property="og:image" content="/b.png"><meta property="og:image:width" content="9">`,
      `<meta http-equiv="content-language" content="de"><script type="application/ld+json; charset=utf-8">{"a":"<b>"}</script><script type="text/json">{}</script>`,
      "</head><body>",
    );
    expect(raw).toMatchObject({ lang: "de-AT", canonical: "/c", feeds: ["/rss", "/atom"], jsonLd: ['{"a":"<b>"}'] });
    expect(Object.fromEntries(raw.meta)).toEqual({ "og:image": "/a.png", "og:image:alt": "A", "content-language": "de" });
  });

  it("keeps hostile JSON-LD bounded: an oversized script is dropped, and at most eight are kept", () => {
    const huge = `<script type="application/ld+json">${"x".repeat(MAX_JSON_LD_CHARS + 1)}</script>`;
    const many = Array.from({ length: 12 }, (_, i) => `<script type="application/ld+json">${i}</script>`).join("");
    const { raw } = collect(`<head>${huge}${many}<title>T</title></head><body>`);
    expect(raw.jsonLd).toEqual(["0", "1", "2", "3", "4", "5", "6", "7"]);
  });
});
