import { parseHtml } from "./dom.js";
import { mainContent } from "./main.js";
import { toText } from "./text.js";
import { removeInvisible } from "./visible.js";

// Content extraction (docs/api.md, "Content"): a page's HTML in, what a reader of it gets out.

/** The text of `html`'s main content (a reader view's: no navigation, footers, banners or hidden text); "" when it has none. */
export function mainText(html: string): string {
  const main = mainContent(() => {
    const document = parseHtml(html);
    removeInvisible(document);
    return document;
  });
  return main ? toText(main) : "";
}
