// PDFs: the default one page sized to the capture at its extremes (a 20,000 px page, a 3840 px wide
// one), and the paged mode (`pdf.paper` ...): read back with pdf.js, page sizes, text in order,
// colours drawn, the page cap, and what a hostile page can do to printing.
import { describe, expect, inject, it } from "vitest";
import { BAND_COLOURS } from "../../dev/harness/fixtures.js";
import { type ErrorBody, postJson } from "../helpers/api.js";
import { readPdf } from "../helpers/pdf.js";

const fixture = (path: string) => `${inject("fixtureUrl")}${path}`;
const hex = (colour: string) => [1, 3, 5].map((i) => Number.parseInt(colour.slice(i, i + 2), 16));
const near = (pixel: number[], colour: number[], tolerance = 10) => colour.every((value, i) => Math.abs(value - pixel[i]!) <= tolerance);

type Envelope = { image: string; format: string; width: number; height: number; pages: number; truncated: boolean };

/** A PDF render answered as the JSON envelope, with its pages read back. */
async function pdfOf(path: "/api/v1/screenshot" | "/api/v1/html-to-screenshot", body: Record<string, unknown>) {
  const res = await postJson(path, { format: "pdf", responseFormat: "json", deviceScaleFactor: 1, ...body });
  expect(res.status, res.status === 200 ? "" : await res.clone().text()).toBe(200);
  const envelope = (await res.json()) as Envelope;
  const pages = await readPdf(Buffer.from(envelope.image, "base64"));
  expect(pages).toHaveLength(envelope.pages);
  return { envelope, pages, truncated: res.headers.get("x-truncated") };
}
const html = (document: string, fields: Record<string, unknown> = {}) => pdfOf("/api/v1/html-to-screenshot", { html: document, ...fields });

/** The texts of `pages` in reading order, page after page. */
const texts = (pages: Awaited<ReturnType<typeof readPdf>>) => pages.flatMap((page) => page.text.map((t) => t.str.trim()));

// Print media shows one paragraph, screen media the other.
const MEDIA =
  "<style>.print{display:none}@media print{.print{display:block}.screen{display:none}}</style><p class=screen>SCREEN MEDIA</p><p class=print>PRINT MEDIA</p>";
// `n` pages' worth of blocks, each forced onto a page of its own and numbered.
const pagesOf = (n: number) => Array.from({ length: n }, (_, i) => `<div style="break-after:page;font:24px sans-serif">Block ${i + 1}</div>`).join("");

describe("PDF: one page sized to the capture (the default)", () => {
  it("a 20,000 px full page at width 400: one page of 300 x 15,000 pt, every band at its place, the fixed header once", async () => {
    const { envelope, pages } = await pdfOf("/api/v1/screenshot", { url: fixture("/bands?n=20"), width: 400, fullPage: true });
    expect([envelope.pages, envelope.width, envelope.height]).toEqual([1, 400, 20_000]);
    const [page] = pages;
    expect([page!.width, page!.height]).toEqual([300, 15_000]);
    // Each band's number inside its band (1,000 CSS px = 750 pt), in order.
    expect(page!.text.map((t) => t.str)).toEqual(BAND_COLOURS.map((_, i) => String(i + 1)));
    expect(page!.text.filter((t, i) => t.y < i * 750 || t.y > (i + 1) * 750)).toEqual([]);
    const drawn = await page!.draw(0.1);
    const wrong = BAND_COLOURS.flatMap((colour, i) => (near(drawn.at(280, (i * 1000 + 700) * 0.75), hex(colour)) ? [] : [`band ${i + 1}`]));
    expect(wrong).toEqual([]);
    expect(near(drawn.at(150, 10), hex("#111111")), "the header at the top").toBe(true);
    expect(near(drawn.at(150, 9000 * 0.75 + 10), hex("#111111")), "and not again further down").toBe(false);
  });

  it("a 3840 px wide page: one page 2,880 pt wide, the four columns in order", async () => {
    const { envelope, pages } = await pdfOf("/api/v1/screenshot", { url: fixture("/columns?w=3840"), width: 3840 });
    expect([envelope.pages, envelope.width, envelope.height]).toEqual([1, 3840, 2400]);
    expect([pages[0]!.width, pages[0]!.height]).toEqual([2880, 1800]);
    const drawn = await pages[0]!.draw(0.1);
    for (let column = 0; column < 4; column++)
      expect(near(drawn.at((column * 960 + 480) * 0.75, 900), hex(BAND_COLOURS[column]!)), `column ${column + 1}`).toBe(true);
  });

  it("is in screen media unless asked; printBackground false leaves backgrounds out", async () => {
    expect(texts((await html(MEDIA, { width: 400, height: 200 })).pages)).toEqual(["SCREEN MEDIA"]);
    expect(texts((await html(MEDIA, { width: 400, height: 200, mediaType: "print" })).pages)).toEqual(["PRINT MEDIA"]);
    const green = "<body style='margin:0;background:#3cb44b'>x</body>";
    const printed = await (await html(green, { width: 400, height: 200 })).pages[0]!.draw(1);
    expect(near(printed.at(200, 100), [0x3c, 0xb4, 0x4b])).toBe(true);
    const bare = await (await html(green, { width: 400, height: 200, pdf: { printBackground: false } })).pages[0]!.draw(1);
    expect(bare.at(200, 100)).toEqual([255, 255, 255]);
  });
});

describe("PDF: paged (pdf.paper)", () => {
  it("A4: every page A4, the whole document across them in order, in print media, the envelope's size the paper's in CSS px", async () => {
    const { envelope, pages } = await pdfOf("/api/v1/screenshot", { url: fixture("/bands?n=20"), width: 400, pdf: { paper: "A4" } });
    expect(envelope.pages).toBeGreaterThan(10);
    expect([envelope.width, envelope.height]).toEqual([794, 1123]);
    for (const page of pages) expect([Math.round(page.width), Math.round(page.height)]).toEqual([596, 842]);
    // The band numbers, each once, in order (the document, not just its first screen).
    expect(texts(pages)).toEqual(BAND_COLOURS.map((_, i) => String(i + 1)));
    expect(texts((await html(MEDIA, { pdf: { paper: "A4" } })).pages)).toEqual(["PRINT MEDIA"]);
    expect(texts((await html(MEDIA, { pdf: { paper: "A4" }, mediaType: "screen" })).pages)).toEqual(["SCREEN MEDIA"]);
  });

  it("Letter landscape, Legal, Tabloid, A3 and A5 have their sizes", async () => {
    const sizes: Record<string, number[]> = {};
    for (const [paper, landscape] of [
      ["Letter", true],
      ["Legal", false],
      ["Tabloid", false],
      ["A3", false],
      ["A5", true],
    ] as const) {
      const { envelope, pages } = await html("<p>x</p>", { pdf: { paper, landscape } });
      sizes[`${paper}${landscape ? " landscape" : ""}`] = [Math.round(pages[0]!.width), Math.round(pages[0]!.height), envelope.width, envelope.height];
    }
    expect(sizes).toEqual({
      "Letter landscape": [792, 612, 1056, 816],
      Legal: [612, 1008, 816, 1344],
      Tabloid: [792, 1224, 1056, 1632],
      A3: [842, 1191, 1123, 1588],
      "A5 landscape": [596, 420, 794, 560],
    });
  });

  it("margin: 10 mm by default, as given otherwise, one for all sides or each its own", async () => {
    const corner = "<body style='margin:0'><p style='margin:0;font:20px sans-serif'>Corner</p></body>";
    const at = async (pdf: Record<string, unknown>) => {
      const [text] = (await html(corner, { pdf: { paper: "A4", ...pdf } })).pages[0]!.text;
      return [Math.round(text!.x), text!.y];
    };
    const [defaultX] = await at({});
    expect(defaultX).toBeCloseTo(28, -1); // 10 mm = 28.3 pt
    const [inchX, inchY] = await at({ margin: "1in" });
    expect(inchX).toBe(72);
    expect(inchY).toBeGreaterThan(72);
    const [noneX, noneY] = await at({ margin: { top: "0", left: "0" } });
    expect(noneX).toBe(0);
    expect(noneY).toBeLessThan(25);
  });

  it("scale 0.5 fits about twice as much on a page; pageRanges picks pages", async () => {
    const document = `<body style='margin:0'>${Array.from({ length: 60 }, (_, i) => `<p style='height:80px;margin:0'>Line ${i + 1}</p>`).join("")}</body>`;
    const whole = await html(document, { pdf: { paper: "A4" } });
    const half = await html(document, { pdf: { paper: "A4", scale: 0.5 } });
    expect(whole.envelope.pages).toBeGreaterThanOrEqual(4);
    expect(half.envelope.pages).toBeLessThanOrEqual(Math.ceil(whole.envelope.pages / 2) + 1);
    expect(texts(half.pages)).toEqual(texts(whole.pages));
    const picked = await html(document, { pdf: { paper: "A4", pageRanges: "2-3" } });
    expect(picked.envelope.pages).toBe(2);
    expect(texts(picked.pages)).toEqual(texts(whole.pages.slice(1, 3)));
  });

  it("holds at most 100 pages: a 101-page document is cut there and marked truncated; exactly 100 is whole", async () => {
    const cut = await html(pagesOf(101), { pdf: { paper: "A5", margin: "0" } });
    expect([cut.envelope.pages, cut.envelope.truncated, cut.truncated]).toEqual([100, true, "true"]);
    expect(texts(cut.pages).at(-1)).toBe("Block 100");
    const whole = await html(pagesOf(100), { pdf: { paper: "A5", margin: "0" } });
    expect([whole.envelope.pages, whole.envelope.truncated, whole.truncated]).toEqual([100, false, null]);
  }, 60_000);

  it("pageRanges past the document: 422 PAGE_RANGE_EMPTY saying how many pages there are, and nothing charged", async () => {
    const signup = await fetch(`${inject("baseUrl")}/api/v1/signup`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: `pdf-${Date.now()}@pdf.test` }),
    });
    const { api_key: key, balance_micro_usd: before } = (await signup.json()) as { api_key: string; balance_micro_usd: number };
    const res = await postJson(
      "/api/v1/html-to-screenshot",
      { html: pagesOf(3), format: "pdf", pdf: { paper: "A4", pageRanges: "5-9" } },
      { authorization: `Bearer ${key}` },
    );
    expect(res.status).toBe(422);
    expect(((await res.json()) as ErrorBody).error).toEqual({
      code: "PAGE_RANGE_EMPTY",
      message: 'pdf.pageRanges: "5-9" selects no page; the document has 3 pages.',
    });
    const usage = (await (await fetch(`${inject("baseUrl")}/api/v1/usage`, { headers: { authorization: `Bearer ${key}` } })).json()) as {
      balance_micro_usd: number;
    };
    expect(usage.balance_micro_usd).toBe(before);
  });

  it("a page's own @page size and margins do not change the paper", async () => {
    const { pages } = await html("<style>@page { size: 40in 90in; margin: 8in }</style><p>x</p>", { pdf: { paper: "A4" } });
    expect([Math.round(pages[0]!.width), Math.round(pages[0]!.height)]).toEqual([596, 842]);
  });

  it("a page that hangs while printing (a busy beforeprint) gets 504 RENDER_TIMEOUT in bounded time, and the next render is fine", async () => {
    const started = Date.now();
    const res = await postJson("/api/v1/html-to-screenshot", {
      html: "<script>addEventListener('beforeprint', () => { for (;;) {} })</script><p>x</p>",
      format: "pdf",
      pdf: { paper: "A4" },
    });
    expect(res.status).toBe(504);
    expect(((await res.json()) as ErrorBody).error.code).toBe("RENDER_TIMEOUT");
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(texts((await html("<p>after</p>", { pdf: { paper: "A4" } })).pages)).toEqual(["after"]);
  });
});
