import { describe, expect, it } from "vitest";
import { type AnyNode, type ChildNode, parseHtml } from "../../lib/content/dom.js";
import { extractContent, mainText } from "../../lib/content/extract.js";
import { unprovenStatically } from "../../lib/content/visible.js";

// Hostile markup the content reader must survive in time linear in the page: nesting it caps (as
// Chromium does, at 512), lists too long to spread into a call, and a stylesheet of more selector
// tests than its budget. Here, not in the unit loop: each takes seconds of CPU by design.

/** The deepest element under `root`, counted without recursion. */
function depthOf(root: AnyNode): number {
  let deepest = 0;
  const stack: [AnyNode, number][] = [[root, 0]];
  while (stack.length) {
    const [node, depth] = stack.pop()!;
    deepest = Math.max(deepest, depth);
    for (const child of (node as { children?: ChildNode[] }).children ?? []) stack.push([child, depth + 1]);
  }
  return deepest;
}

describe("parsing hostile markup", () => {
  it("nests at most 512 deep and keeps the text below: 300,000 nested elements (uncapped, parsing alone took ~20 s)", { timeout: 20_000 }, () => {
    const html = `<body>${"<div>".repeat(300_000)}<p>Deep down, the text.</p>${"</div>".repeat(300_000)}<p>After.</p></body>`;
    const document = parseHtml(html);
    expect(depthOf(document)).toBeLessThanOrEqual(515);
    const text = extractContent(html, null, "page", "static").text;
    expect(text).toContain("Deep down, the text.");
    expect(text).toContain("After.");
  });

  it("the main text of 100,000 nested elements in bounded time (removing their 100,000 flattened siblings one by one took 21 s)", { timeout: 20_000 }, () => {
    const html = `<body>${"<div>".repeat(100_000)}<article><h1>Deep down</h1><p>${"The article's own words, read. ".repeat(8)}</p></article>${"</div>".repeat(100_000)}</body>`;
    const started = performance.now();
    expect(extractContent(html, null, "main", "static").text).toContain("The article's own words, read.");
    // 2 s here when idle; the bound is five times that, and half what one removal at a time took.
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  it("mismatched end tags under deep nesting, and 1,000,000 unclosed links: parsed, and read", { timeout: 20_000 }, () => {
    expect(depthOf(parseHtml(`${"<div>".repeat(200_000)}${"</span>".repeat(200_000)}x`))).toBeLessThanOrEqual(515);
    const links = `<body><p>Before.</p>${"<a>".repeat(1_000_000)}</body>`;
    expect(extractContent(links, null, "page", "static").text).toContain("Before.");
  });

  it("a table of 200,000 rows becomes Markdown (its width is not found by spreading the rows into a call)", { timeout: 20_000 }, () => {
    const html = `<body><table>${"<tr><td>cell</td><td>two</td></tr>".repeat(200_000)}</table></body>`;
    const markdown = extractContent(html, null, "page", "static").markdown;
    expect(markdown.split("\n").length).toBeGreaterThan(200_000);
    expect(markdown).toContain("| cell | two |");
  });

  it("a code block of 200,000 backtick runs becomes a fenced block longer than its longest run", { timeout: 20_000 }, () => {
    const html = `<body><pre><code>${"`a".repeat(200_000)}\`\`\`\`</code></pre></body>`;
    const markdown = extractContent(html, null, "page", "static").markdown;
    expect(markdown.startsWith("`````\n")).toBe(true);
  });
});

describe("reading hostile pages", () => {
  const page = (styles: string, body: string) => `<!doctype html><html><head><style>${styles}</style></head><body>${body}</body></html>`;
  const read = (html: string) => extractContent(html, null, "page", "static").markdown;

  it("bounds a hostile stylesheet: past its selector tests, the rest of the page is left out, and the verdict is unproven", () => {
    // 20,000 rules all keyed on <p>, over 20,000 paragraphs: 100 million selector tests unbounded.
    const rules = Array.from({ length: 20_000 }, (_, i) => `.c${i} .d${i} p{color:#${(i % 4096).toString(16).padStart(3, "0")}}`).join("");
    const body = Array.from({ length: 20_000 }, (_, i) => `<div class="c${i % 50}"><p class="d${i}">text ${i}.</p></div>`).join("");
    const html = page(rules, body);
    const started = performance.now();
    expect(unprovenStatically(parseHtml(html))).toBe("more than 5000 style rules");
    const markdown = read(html);
    expect(markdown).toContain("text 0.");
    expect(markdown).not.toContain("text 19999.");
    // The bound is the budget, proven by what is left out above; the clock only catches a blow-up
    // (~3.5 s here when the machine is quiet), with room for a busy one.
    expect(performance.now() - started).toBeLessThan(30_000);
  }, 60_000);

  // 50,000 levels take a few seconds on a busy machine (each lenient pass parses again): linear, never quadratic.
  it("the main text of 50,000 nested levels", { timeout: 60_000 }, () => {
    const paragraph =
      "<p>Paragraph 1 of the article goes on, with commas, clauses, and enough words to read as prose, the way a real story does, sentence after sentence.</p>";
    expect(mainText(`${"<div>".repeat(50_000)}${paragraph}${"</div>".repeat(50_000)}`)).toContain("Paragraph 1 of the article");
  });
});
