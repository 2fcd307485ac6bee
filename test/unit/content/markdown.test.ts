import { describe, expect, it } from "vitest";
import { extractContent } from "../../../lib/content/extract.js";

// A page as Markdown: the structures a reader relies on, converted right, and nothing invented.

const page = `<html><body><nav><a href="/">Home</a></nav><main><article>
<h1>Title <em>here</em></h1>
<p>Some <strong>bold</strong> and <a href="/rel?a=1#top">a link</a>, with a * star, [brackets] and <a href="mailto:x@example.com">mail</a>.</p>
<ul><li>one</li><li>two<ul><li>nested <code>x()</code></li></ul></li></ul>
<ol start="3"><li>three</li><li>four</li></ol>
<pre class="language-python"><code>def go():\n    return "a \`tick\`"</code></pre>
<table><thead><tr><th>Name</th><th>Value</th></tr></thead><tbody><tr><td>a | b</td><td>2</td></tr></tbody></table>
<blockquote><p>Quoted, with enough words to be a paragraph of the article, and commas, and more.</p></blockquote>
<p><img src="pic.png" alt="A picture"> <img src="spacer.gif"></p>
<p>The article goes on for a while, with commas, clauses, and more words, so that it reads as the main content, which it is.</p>
<p>A second paragraph of the article, with a <a href="/rel?a=1">repeat of the link</a> and <a href="https://other.example/x">another</a>.</p>
</article></main><footer>© Footer</footer></body></html>`;

describe("content as Markdown", () => {
  const content = extractContent(page, "https://example.com/dir/page", "main", "static");

  it("writes headings, emphasis, absolute links, nested and numbered lists, code with its language, tables, quotes and images", () => {
    const md = content.markdown;
    expect(md).toContain("# Title *here*");
    expect(md).toContain("Some **bold** and [a link](https://example.com/rel?a=1#top), with a \\* star, \\[brackets\\] and [mail](mailto:x@example.com).");
    expect(md).toContain("- one\n- two\n  - nested `x()`");
    expect(md).toContain("3. three\n4. four");
    expect(md).toContain('```python\ndef go():\n    return "a `tick`"\n```');
    expect(md).toContain("| Name | Value |\n| --- | --- |\n| a \\| b | 2 |");
    expect(md).toContain("> Quoted, with enough words");
    expect(md).toContain("![A picture](https://example.com/dir/pic.png)");
    // Nothing that is not the page's: no navigation, no footer, no alt text for an image without one.
    expect(md).not.toContain("Home");
    expect(md).not.toContain("Footer");
    expect(md).not.toContain("spacer");
  });

  it("lists each link once, absolute, without its fragment, with its first text", () => {
    expect(content.links).toEqual([
      { url: "https://example.com/rel?a=1", text: "a link" },
      { url: "https://other.example/x", text: "another" },
    ]);
  });

  it("gives the whole visible page with scope page, and plain text block by block", () => {
    const whole = extractContent(page, "https://example.com/", "page", "static");
    expect(whole.text).toContain("Home");
    expect(whole.text).toContain("© Footer");
    expect(content.text).toContain("Title here\n\nSome bold and a link, with a * star");
    expect(content.html).toMatch(/^<(div|main|article)/);
    expect(content.html).not.toContain("<nav");
  });
});
