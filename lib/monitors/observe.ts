import { RE2JS } from "re2js";
import { settledDom } from "../content/browser.js";
import { extractContent } from "../content/extract.js";
import type { Deadline } from "../deadline.js";
import { scriptsDrawn } from "../metadata/rendered.js";
import { type Capture, captureSettled, pageIdentity, withSettledPage } from "../render/capture.js";
import type { LoadedPage } from "../render/page-load.js";
import type { MonitorSpec } from "./store.js";

// What a check sees of its page (docs/api.md, "Monitors"): one page load, settled as a screenshot's
// is (animations and carets frozen), the elements of `ignoreSelectors` hidden in place (their room
// kept, so nothing else moves), the text of `ignoreText` hidden with its element, then captured
// (visual) and read (text: the whole page's visible text, line by line, `ignoreText` taken out of
// each line). The customer's patterns run in RE2's linear time (re2js), never in a backtracking
// engine: a pattern cannot make a check (or the page) spin.

/** Most `ignoreText` patterns, and the longest. */
export const MAX_IGNORE_PATTERNS = 20;
export const MAX_PATTERN_CHARS = 200;
/**
 * Characters of the page's text a check reads at most, for its masking and for its lines each (a
 * hostile page may hold millions). It bounds the work of the patterns (at most 20 over 500,000
 * characters: ~70 ms measured), the baseline kept, and the diff's input.
 */
export const MAX_TEXT_CHARS = 500_000;
/** Text nodes the page's masking reads at most, and characters of each. */
const MASK_NODES = 20_000;
const MASK_NODE_CHARS = 2_000;
/** Lines of text a check keeps at most, each cut to this many characters. */
export const MAX_LINES = 20_000;
const MAX_LINE_CHARS = 2_000;

/** A pattern of `ignoreText`, compiled; a syntax error (a backreference, a lookaround: not RE2) is thrown with its reason. */
export const compilePattern = (pattern: string) => RE2JS.compile(pattern);

/** What a check saw. */
export interface Observation {
  readonly capture: Capture | null;
  readonly lines: string[] | null;
  readonly page: { readonly url: string | null; readonly title: string; readonly incomplete?: string };
}

/** Hides, with its element, each text node of the page that a pattern matches. */
async function maskText(loaded: LoadedPage, patterns: readonly RE2JS[]): Promise<number> {
  const key = JSON.stringify(`__shotlineIgnored${Math.random().toString(36).slice(2)}`);
  const texts = await loaded.evaluate<string[]>(`(() => {
    const nodes = [], texts = [];
    let chars = 0;
    const walker = document.createTreeWalker(document.body || document.documentElement, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node && nodes.length < ${MASK_NODES} && chars < ${MAX_TEXT_CHARS}; node = walker.nextNode()) {
      if (!node.data.trim() || !node.parentElement) continue;
      nodes.push(node);
      texts.push(node.data.slice(0, ${MASK_NODE_CHARS}));
      chars += texts[texts.length - 1].length;
    }
    Object.defineProperty(window, ${key}, { value: nodes, configurable: true });
    return texts;
  })()`);
  const matched = texts.flatMap((text, index) => (patterns.some((pattern) => pattern.test(text)) ? [index] : []));
  await loaded.evaluate(`(() => {
    const nodes = window[${key}] || [];
    for (const index of ${JSON.stringify(matched)}) nodes[index]?.parentElement?.style.setProperty("visibility", "hidden", "important");
    delete window[${key}];
  })()`);
  return matched.length;
}

/** The page's text as a check compares it: its lines, `ignoreText` taken out of each, empty lines left out; MAX_LINES and MAX_TEXT_CHARS at most. */
export function linesOf(text: string, patterns: readonly RE2JS[]): string[] {
  const lines: string[] = [];
  let chars = 0;
  for (let start = 0; start < text.length && lines.length < MAX_LINES && chars < MAX_TEXT_CHARS; ) {
    const end = text.indexOf("\n", start);
    const stop = end < 0 ? text.length : end;
    let line = text.slice(start, Math.min(stop, start + MAX_LINE_CHARS, start + MAX_TEXT_CHARS - chars));
    chars += line.length;
    start = stop + 1;
    for (const pattern of patterns) if (pattern.test(line)) line = pattern.matcher(line).replaceAll("");
    line = line.replace(/\s+/g, " ").trim();
    if (line) lines.push(line);
  }
  return lines;
}

/** Loads the monitor's page once and observes it as its mode asks, before the deadline. */
export function observe(spec: MonitorSpec, deadline: Deadline): Promise<Observation> {
  const source = { kind: "url" as const, url: spec.request.url };
  const patterns = spec.ignoreText.map(compilePattern);
  return withSettledPage(source, spec.options, deadline, async (settled) => {
    if (spec.mode !== "visual") await scriptsDrawn(settled.loaded);
    if (patterns.length) await maskText(settled.loaded, patterns);
    const capture = spec.mode !== "text" ? await captureSettled(settled, source, spec.options) : null;
    const identity = capture ?? (await pageIdentity(settled.loaded, source));
    const lines = spec.mode !== "visual" ? linesOf(extractContent(await settledDom(settled), identity.url, "page", "rendered").text, patterns) : null;
    const incomplete = settled.loaded.incomplete;
    return { capture, lines, page: { url: identity.url, title: identity.title, ...(incomplete ? { incomplete } : {}) } };
  });
}
