import type { Deadline } from "../deadline.js";
import { scriptsDrawn } from "../metadata/rendered.js";
import { withoutCredentials } from "../redacted.js";
import { type Capture, captureSettled, type SettledPage, withSettledPage } from "../render/capture.js";
import type { CaptureOptions, RenderSource } from "../render/options.js";
import type { Incomplete } from "../render/page-load.js";
import type { PageLogs } from "../render/page-log.js";
import { MIN_CONTRAST } from "./styles.js";
import { HIDDEN_MARK, TEXT_HIDDEN_MARK } from "./visible.js";

// The content's browser path: the page loaded and settled through render's pipeline with the
// request's page controls (as a screenshot of it would be), its DOM read after its scripts ran, with
// what its computed styles hide marked for lib/content/visible.ts; for a snapshot, the capture of
// that same page load.

/** Elements MARK_HIDDEN judges at most (a hostile page may hold millions); the rest are left out. */
const MARK_LIMIT = 50_000;
/**
 * The hit tests' work MARK_HIDDEN does at most, in scrolls x the page's weight: after each scroll,
 * the first hit test costs the browser a pass over the whole page. Measured here, a scroll costs 1.8
 * ms with 5,000 elements, 7.3 ms with 20,000 and 50 ms with 50,000: about 0.37 us x elements x
 * max(1, elements / 20,000), the page's weight. 5 million is about 2 s, and more than a real page
 * needs (a 20,000 px page of 5,000 elements scrolls some 60 times: 300,000). Past it, the text not
 * judged yet is left out as unseen, never let through unjudged.
 */
const HIT_TEST_WORK = 5_000_000;

/**
 * Marks what a reader of the drawn page cannot see: with HIDDEN_MARK, elements not drawn at all
 * (no box, their content clipped away, faded out); with TEXT_HIDDEN_MARK, elements whose own text
 * (or an image's alt text) is nowhere to be seen. Text is seen when, at a point of one of its line
 * boxes scrolled into view, the browser's hit test finds its element there (so it is not clipped,
 * off the page or scaled to nothing), its line box is at least MIN_FONT_PX tall, nothing opaque lies
 * above it, and its colour (with the opacity of it and its ancestors) stands out against what is
 * painted below it, by MIN_CONTRAST. A string, as LoadedPage.evaluate takes scripts.
 */
const MARK_HIDDEN = `(() => {
  const HIDDEN = ${JSON.stringify(HIDDEN_MARK)}, TEXT = ${JSON.stringify(TEXT_HIDDEN_MARK)};
  const MIN_CONTRAST = ${MIN_CONTRAST}, MIN_OPACITY = 0.05, MIN_TEXT_PX = 4;
  if (!document.body) return;
  const all = Array.from(document.body.querySelectorAll("*"));
  for (const element of all.slice(${MARK_LIMIT})) element.setAttribute(HIDDEN, "");
  const elements = all.slice(0, ${MARK_LIMIT});
  const styles = new Map();
  const style = (element) => { let s = styles.get(element); if (!s) { s = getComputedStyle(element); styles.set(element, s); } return s; };
  const opacities = new Map();
  const opacity = (element) => {
    if (!element || element === document.documentElement) return 1;
    let o = opacities.get(element);
    if (o === undefined) { o = Number(style(element).opacity) * opacity(element.parentElement); opacities.set(element, o); }
    return o;
  };
  // Any CSS colour as RGBA bytes, through a canvas (every syntax the browser knows).
  const canvas = document.createElement("canvas");
  canvas.width = canvas.height = 1;
  const context = canvas.getContext("2d", { willReadFrequently: true });
  const colours = new Map();
  const rgba = (value) => {
    let c = colours.get(value);
    if (!c) {
      context.clearRect(0, 0, 1, 1);
      context.fillStyle = "#000";
      context.fillStyle = value;
      context.fillRect(0, 0, 1, 1);
      const d = context.getImageData(0, 0, 1, 1).data;
      c = [d[0], d[1], d[2], d[3] / 255];
      colours.set(value, c);
    }
    return c;
  };
  const blend = (over, under, alpha) => [0, 1, 2].map((i) => over[i] * alpha + under[i] * (1 - alpha));
  const luminance = (c) => { const [r, g, b] = c.map((v) => { const s = v / 255; return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4; }); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const contrast = (a, b) => { const x = luminance(a), y = luminance(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
  const hasImage = (element) => style(element).backgroundImage !== "none";
  // First pass, before anything changes: elements that are not drawn at all.
  let gone = null;
  for (const element of elements) {
    if (gone && gone.contains(element)) { element.setAttribute(HIDDEN, ""); continue; }
    const s = style(element);
    if (s.display === "contents") continue;
    const box = element.getBoundingClientRect();
    const clips = /hidden|clip/.test(s.overflow) || /paint|strict|content/.test(s.contain);
    const notDrawn = !element.checkVisibility({ opacityProperty: false, visibilityProperty: false }) || s.contentVisibility === "hidden" ||
      opacity(element) < MIN_OPACITY || (clips && (box.width < 2 || box.height < 2));
    if (notDrawn) { element.setAttribute(HIDDEN, ""); gone = element; }
  }
  // Second pass: hit-test each text. Lazy content is drawn and every element hit-testable while it runs.
  const override = document.createElement("style");
  override.textContent = "*{pointer-events:auto!important;content-visibility:visible!important;scroll-behavior:auto!important}";
  document.documentElement.append(override);
  const startX = window.scrollX, startY = window.scrollY;
  const width = window.innerWidth, height = window.innerHeight;
  // Elements inside a fixed or sticky box: they cover what is under them in one place of a full-page capture only.
  const fixedness = new Map();
  const inFixed = (element) => {
    if (!element || element === document.documentElement) return false;
    let f = fixedness.get(element);
    if (f === undefined) { f = /fixed|sticky/.test(style(element).position) || inFixed(element.parentElement); fixedness.set(element, f); }
    return f;
  };
  // Whether text drawn by \`element\` over the backdrop \`under\` (bottom up, on the white canvas) can be read.
  const readable = (element, under) => {
    if (element.tagName === "IMG") return true;
    const s = style(element);
    if (s.textShadow !== "none" || parseFloat(s.webkitTextStrokeWidth) > 0) return true;
    let backdrop = [255, 255, 255];
    for (const below of under) {
      if (hasImage(below)) return true;
      const c = rgba(style(below).backgroundColor);
      backdrop = blend(c, backdrop, c[3] * opacity(below));
    }
    const ink = rgba(s.webkitTextFillColor || s.color);
    return contrast(blend(ink, backdrop, ink[3] * opacity(element)), backdrop) >= MIN_CONTRAST;
  };
  const pageWidth = Math.max(document.documentElement.scrollWidth, width), pageHeight = Math.max(document.documentElement.scrollHeight, document.body.scrollHeight, height);
  const maxScrollX = pageWidth - width, maxScrollY = pageHeight - height;
  const ancestry = (element) => { const chain = []; for (let e = element; e; e = e.parentElement) chain.unshift(e); return chain; };
  let scrolls = 0;
  const maxScrolls = Math.floor(${HIT_TEST_WORK} / Math.max(1, elements.length * Math.max(1, elements.length / 20000)));
  const seenAt = (element, rectOf) => {
    let rect = rectOf();
    if (!rect || rect.width < 1 || rect.height < MIN_TEXT_PX) return false;
    // Off the page (left of it, above it, past its end): nowhere to be seen.
    if (rect.right + window.scrollX <= 0 || rect.bottom + window.scrollY <= 0 || rect.left + window.scrollX >= pageWidth || rect.top + window.scrollY >= pageHeight) return false;
    const probe = () => [rect.left + Math.min(rect.width / 2, 12), rect.top + rect.height / 2];
    let [x, y] = probe();
    // Brought into the middle of the window (near the top of its middle band, so that the text after
    // it is in the band too: a scroll costs the next hit test a pass over the page), unless the page
    // cannot scroll that way (text at its left edge asks for a scroll the browser would clamp to
    // where it is: a scroll for nothing).
    const farX = x < width * 0.1 || x > width * 0.9, farY = y < height * 0.25 || y > height * 0.75;
    const toX = farX ? Math.min(maxScrollX, Math.max(0, window.scrollX + x - width / 2)) : window.scrollX;
    const toY = farY ? Math.min(maxScrollY, Math.max(0, window.scrollY + y - height * 0.3)) : window.scrollY;
    if (Math.abs(toX - window.scrollX) >= 1 || Math.abs(toY - window.scrollY) >= 1) {
      if (++scrolls > maxScrolls) return false;
      window.scrollTo(toX, toY);
      rect = rectOf();
      if (!rect) return false;
      [x, y] = probe();
    }
    // On the page but out of the window's reach (a scroll container, a page that locked its
    // scrolling): judged by its colour on its ancestors' backgrounds, without a hit test.
    if (x < 0 || y < 0 || x >= width || y >= height) return readable(element, ancestry(element));
    const stack = document.elementsFromPoint(x, y);
    const at = stack.indexOf(element);
    if (at < 0) return false;
    for (let i = 0; i < at; i++) {
      const above = stack[i];
      if (element.contains(above) || above.contains(element) || inFixed(above)) continue;
      if (rgba(style(above).backgroundColor)[3] * opacity(above) >= 0.95) return false;
    }
    return readable(element, stack.slice(at).reverse());
  };
  try {
    for (const element of elements) {
      if (element.hasAttribute(HIDDEN)) continue;
      // Past the hit tests' budget: what is left is not judged, so it is left out.
      if (scrolls > maxScrolls) { element.setAttribute(TEXT, ""); continue; }
      if (element.tagName === "IMG") {
        if ((element.getAttribute("alt") || "").trim() && !seenAt(element, () => element.getBoundingClientRect())) element.setAttribute(TEXT, "");
        continue;
      }
      const texts = Array.from(element.childNodes).filter((node) => node.nodeType === 3 && node.data.trim());
      if (texts.length === 0) continue;
      const range = document.createRange();
      const seen = texts.slice(0, 4).some((node) => {
        range.selectNodeContents(node);
        const count = Math.min(range.getClientRects().length, 3);
        for (let i = 0; i < count; i++) if (seenAt(element, () => { range.selectNodeContents(node); return range.getClientRects()[i]; })) return true;
        return false;
      });
      if (!seen) element.setAttribute(TEXT, "");
    }
  } finally {
    override.remove();
    window.scrollTo(startX, startY);
  }
})()`;

/** What the browser read of a page. */
export interface BrowserRead {
  /** The DOM as HTML, hidden elements marked. */
  readonly html: string;
  /** The final URL; null for a document sent as HTML. */
  readonly url: string | null;
  /** The capture of the same page load, when asked. */
  readonly capture: Capture | null;
  /** Set when the page was read as it stood at the page-load limit. */
  readonly incomplete: Incomplete | null;
  /** What the page did, when `capture` asked for it. */
  readonly logs?: PageLogs | undefined;
}

/** The DOM of a settled page as HTML, what a reader cannot see marked (its scripts must have drawn: `scriptsDrawn`). */
export async function settledDom({ loaded }: SettledPage): Promise<string> {
  await loaded.evaluate(MARK_HIDDEN);
  return loaded.settled(() => loaded.page.content());
}

/** Loads `source` with `options` and reads its DOM before the deadline; with `snapshot`, captures it first. */
export function readInBrowser(source: RenderSource, options: CaptureOptions, snapshot: boolean, deadline: Deadline): Promise<BrowserRead> {
  return withSettledPage(source, options, deadline, async (settled) => {
    // A shell page's scripts draw after timers as well as fetches: the pipeline's settling may not wait for them.
    await scriptsDrawn(settled.loaded);
    const capture = snapshot ? await captureSettled(settled, source, options) : null;
    const html = await settledDom(settled);
    // Without the credentials its URL was given with: the answer says it, and its links are resolved against it.
    return { html, url: source.kind === "url" ? withoutCredentials(settled.loaded.page.url()) : null, capture, incomplete: settled.loaded.incomplete };
  });
}
