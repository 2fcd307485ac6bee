// POST /api/v1/content through the local stack: an article among what a reader view leaves out,
// every hidden-text trick (statically and in the browser), a script shell (the browser in "auto",
// not in "never"), a document sent as HTML, exact charges and x402 quotes, and hostile pages.
import { describe, expect, inject, it } from "vitest";
import { HIDDEN_TRICKS } from "../../dev/harness/content-pages.js";
import { type ErrorBody, postJson, type X402Body } from "../helpers/api.js";

const fixture = (path: string) => `${inject("fixtureUrl")}/content${path}`;
type Content = {
  url: string | null;
  title: string;
  markdown?: string;
  text?: string;
  html?: string;
  metadata: { title: string; description: string };
  links?: { url: string; text: string }[];
  rendered: boolean;
  tokens: number;
};
const content = async (body: Record<string, unknown>) => {
  const res = await postJson("/api/v1/content", body);
  return { res, body: (await res.clone().json()) as Content & ErrorBody };
};
const hiddenMarkers = HIDDEN_TRICKS.map((trick) => /HIDDEN-[A-Z-]+/.exec(trick)![0]);

describe("POST /api/v1/content", () => {
  it("answers an article's main content as Markdown: headings, table, code, nested lists, absolute links; none of the page around it", async () => {
    const { res, body } = await content({ url: fixture("/article"), links: true });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-charged-micro-usd")).toBe("2000");
    expect(body).toMatchObject({
      url: fixture("/article"),
      title: "The article",
      rendered: false,
      metadata: { title: "The article", description: "What the article is about." },
    });
    const md = body.markdown!;
    expect(md).toContain("# The headline");
    expect(md).toContain("| Name | Value |\n| --- | --- |\n| alpha | 1 |\n| beta | 2 |");
    expect(md).toContain("```js\nconst answer = 42;\nconsole.log(answer);\n```");
    expect(md).toContain("- First point\n- Second point\n  1. Nested one\n  2. Nested two");
    expect(md).toContain(`[the guide](${inject("fixtureUrl")}/docs/guide?x=1#part)`);
    for (const n of [1, 2, 3]) expect(md).toContain(`Paragraph ${n} of the article`);
    for (const outside of ["Home", "We use cookies", "Share on Twitter", "Another story", "A reader's comment", "The Paper"]) expect(md).not.toContain(outside);
    for (const marker of hiddenMarkers.filter((m) => m !== "HIDDEN-SCRIPTED-CLASS")) expect(md).not.toContain(marker);
    expect(body.tokens).toBe(Math.ceil(md.length / 4));
    // Each link once, absolute, without its fragment.
    expect(body.links).toEqual([
      { url: `${inject("fixtureUrl")}/docs/guide?x=1`, text: "the guide" },
      { url: "https://other.example/page", text: "another site" },
    ]);
  });

  it("in the browser (render: always) leaves out what the page's scripts and computed styles hide too", async () => {
    const { res, body } = await content({ url: fixture("/article"), format: "text", render: "always" });
    expect(res.status).toBe(200);
    expect(body.rendered).toBe(true);
    expect(body.text).toContain("Paragraph 3 of the article");
    for (const marker of hiddenMarkers) expect(body.text, marker).not.toContain(marker);
    expect(body.text).not.toContain("ignore previous instructions");
  });

  it("renders a script shell in auto, not in never; gives the whole page with scope page; cleaned HTML with format html", async () => {
    const auto = await content({ url: fixture("/shell"), format: "text" });
    expect(auto.res.status).toBe(200);
    expect(auto.body).toMatchObject({ rendered: true, title: "Drawn by script" });
    expect(auto.body.text).toContain("Scripted paragraph 3 of the article");
    const never = await content({ url: fixture("/shell"), format: "text", render: "never" });
    expect(never.body).toMatchObject({ rendered: false, text: "" });
    const whole = await content({ url: fixture("/article"), format: "text", scope: "page" });
    expect(whole.body.text).toContain("Home");
    expect(whole.body.text).toContain("Paragraph 1 of the article");
    const html = await content({ url: fixture("/article"), format: "html" });
    expect(html.body.html).toMatch(/<h1>The headline<\/h1>/);
    expect(html.body.html).not.toMatch(/<script|<nav|<footer|HIDDEN-DISPLAY/);
  });

  it("scrapes fields: text, an attribute, every match; hidden elements are not scraped", async () => {
    const { res, body } = await content({
      url: fixture("/article"),
      format: "text",
      extract: {
        headline: "h1",
        links: { selector: "article a", attribute: "href", all: true },
        cells: { selector: "td:first-child", all: true },
        missing: ".nothing-here",
        secret: ".sr-gone",
      },
    });
    expect(res.status).toBe(200);
    expect((body as unknown as { data: unknown }).data).toEqual({
      headline: "The headline",
      links: ["/docs/guide?x=1#part", "https://other.example/page", "/docs/guide?x=1"],
      cells: ["alpha", "beta"],
      missing: null,
      secret: null,
    });
    const bad = await content({ url: fixture("/article"), extract: { a: "h1[" } });
    expect(bad.res.status).toBe(400);
    expect(bad.body.error.message).toMatch(/extract\.a: is not a CSS selector this service can read/);
  });

  it("reads a document sent as html (no address: relative links are left out)", async () => {
    const { res, body } = await content({
      html: `<html><head><title>Sent</title></head><body><article><h1>Sent</h1><p>A document sent as HTML, with commas, and enough words to count as the content of it, <a href="/relative">relative</a> and <a href="https://example.org/abs">absolute</a>.</p></article></body></html>`,
      links: true,
    });
    expect(res.status).toBe(200);
    expect(body).toMatchObject({ url: null, title: "Sent", rendered: false });
    expect(body.markdown).toContain("# Sent");
    expect(body.links).toEqual([{ url: "https://example.org/abs", text: "absolute" }]);
  });

  it("refuses what it cannot read, in the error shape, charging nothing", async () => {
    for (const [request, pattern] of [
      [{}, /give exactly one of url \(a page\) and html \(a document\)/],
      [{ url: fixture("/article"), html: "<p>x</p>" }, /give exactly one of url/],
      [{ url: fixture("/article"), format: "pdf" }, /format: must be one of "markdown", "text", "html"/],
      [{ url: fixture("/article"), screenshot: true }, /unknown field "screenshot"/],
      [{ url: fixture("/article"), extract: {} }, /extract: must name 1 to 20 fields/],
    ] as const) {
      const { res, body } = await content(request as Record<string, unknown>);
      expect(res.status, JSON.stringify(request)).toBe(400);
      expect(body.error.message).toMatch(pattern);
      expect(res.headers.get("x-charged-micro-usd")).toBeNull();
    }
    const image = await content({ url: fixture("/image") });
    expect(image.res.status).toBe(422);
    expect(image.body.error).toMatchObject({ code: "INVALID_URL", message: expect.stringContaining("is not an HTML page") });
    expect(image.res.headers.get("x-charged-micro-usd")).toBe("0");
  });

  it("quotes $0.002 in its 402 to a caller without a key", async () => {
    const res = await postJson("/api/v1/content", { url: fixture("/article") }, {});
    expect(res.status).toBe(402);
    const quote = (await res.json()) as X402Body;
    expect(quote.accepts[0]!.maxAmountRequired ?? quote.accepts[0]!.amount).toBe("2000");
  });

  it("stays within bounds on hostile pages: 10 MB of text, a DOM rewritten forever", async () => {
    const big = await content({ url: fixture("/big-text"), format: "text" });
    expect(big.res.status).toBe(200);
    // Read to the 5 MB limit at most.
    expect(big.body.text!.length).toBeLessThanOrEqual(5 * 1024 * 1024);
    expect(big.body.text!.length).toBeGreaterThan(1_000_000);
    const churn = await content({ url: fixture("/churn"), format: "text", render: "always" });
    expect([200, 504]).toContain(churn.res.status);
    if (churn.res.status === 200) expect(churn.body.text).toContain("Paragraph 3 of the article");
  }, 60_000);
});
