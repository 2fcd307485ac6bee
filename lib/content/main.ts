import { type AnyNode, BLOCKS, type Document, type Element, elements, isElement, remove, removeAll, textOf } from "./dom.js";

// The main content of a page, as a reader view keeps it (docs/api.md, "Content"): no navigation,
// footers, cookie banners, ads, share bars or related links. The method is Readability's, on
// htmlparser2's DOM: drop what is unlikely to be content by its tag, role, class and id; score the
// paragraphs (their length and commas) into their ancestors; take the best-scoring ancestor, less
// the share of its text in links, with the siblings that score near it; then clean what it holds.

const UNLIKELY =
  /-ad-|ai2html|banner|breadcrumb|combx|comment|community|cover-wrap|disqus|extra|footer|gdpr|header|legends|menu|related|remark|replies|rss|shoutbox|sidebar|skyscraper|social|sponsor|supplemental|ad-break|agegate|pagination|pager|popup|yom-remote|share|sharing|cookie|consent|newsletter|subscribe|promo|outbrain|taboola|signup|recommend/i;
const MAYBE = /and|article|body|column|content|main|shadow|story|entry|post/i;
const POSITIVE = /article|body|content|entry|hentry|h-entry|main|page|post|text|blog|story/i;
const NEGATIVE =
  /-ad-|hidden|^hid$| hid$| hid |^hid |banner|combx|comment|com-|contact|footer|gdpr|masthead|media|meta|outbrain|promo|related|scroll|share|shoutbox|sidebar|skyscraper|sponsor|shopping|tags|widget|byline|author|dateline|writtenby|caption|credit/i;
/** Roles and tags that are never the main content. */
const UNLIKELY_ROLES = new Set(["navigation", "complementary", "banner", "contentinfo", "dialog", "alertdialog", "menu", "menubar", "search", "alert"]);
const NOT_MAIN = new Set(["nav", "aside", "footer"]);
/** Where paragraphs are: what scores into its ancestors. */
const SCORED = new Set(["p", "pre", "td", "blockquote", "section", "h2", "h3", "h4", "h5", "h6"]);

type Scores = Map<Element, number>;

const classAndId = (element: Element) => `${element.attribs.class ?? ""} ${element.attribs.id ?? ""}`;

/** +25 for a class or id that says content, -25 for one that says otherwise. */
function classWeight(element: Element): number {
  const names = classAndId(element);
  if (!names.trim()) return 0;
  return (POSITIVE.test(names) ? 25 : 0) - (NEGATIVE.test(names) ? 25 : 0);
}

function baseScore(element: Element): number {
  const byTag: Record<string, number> = {
    div: 5,
    article: 10,
    main: 5,
    pre: 3,
    td: 3,
    blockquote: 3,
    address: -3,
    ol: -3,
    ul: -3,
    dl: -3,
    dd: -3,
    dt: -3,
    li: -3,
    form: -3,
    h1: -5,
    h2: -5,
    h3: -5,
    h4: -5,
    h5: -5,
    h6: -5,
    th: -5,
  };
  const microdata = element.attribs.itemprop === "articleBody" || element.attribs.itemprop === "text" ? 50 : 0;
  return (byTag[element.name] ?? 0) + classWeight(element) + microdata;
}

const normalSpace = (text: string) => text.replace(/\s+/g, " ").trim();

/** What scoring asks of an element's subtree: its text's length, the part in links, its commas, paragraphs and list items. */
interface Measure {
  length: number;
  linked: number;
  commas: number;
  paragraphs: number;
  items: number;
}

/**
 * Every element's Measure, in one pass from the leaves up: asking each element for its text would
 * cost the page's size for every element (a 100,000-deep page, billions of steps).
 */
function measure(root: AnyNode): Map<AnyNode, Measure> {
  const measures = new Map<AnyNode, Measure>();
  const stack: [AnyNode, boolean][] = [[root, false]];
  while (stack.length) {
    const [node, done] = stack.pop()!;
    const children = (node as { children?: AnyNode[] }).children;
    if (!done && children) {
      stack.push([node, true]);
      for (const child of children) stack.push([child, false]);
      continue;
    }
    const own: Measure = { length: 0, linked: 0, commas: 0, paragraphs: 0, items: 0 };
    if (node.type === "text") {
      const data = (node as { data: string }).data.replace(/\s+/g, " ");
      own.length = data.trim() ? data.length : 0;
      own.commas = data.split(/[,،、，]/).length - 1;
    }
    for (const child of children ?? []) {
      const m = measures.get(child)!;
      own.length += m.length;
      own.linked += m.linked;
      own.commas += m.commas;
      own.paragraphs += m.paragraphs;
      own.items += m.items;
    }
    if (isElement(node)) {
      if (node.name === "a") own.linked = own.length * (node.attribs.href?.startsWith("#") ? 0.3 : 1);
      if (node.name === "p") own.paragraphs++;
      if (node.name === "li") own.items++;
    }
    measures.set(node, own);
  }
  return measures;
}

/** The share of a measured element's text that is in links (0 to 1). */
const densityOf = (m: Measure | undefined) => (m?.length ? Math.min(1, m.linked / m.length) : 0);

const hasBlockChild = (element: Element) => element.children.some((child) => isElement(child) && BLOCKS.has(child.name));

/** The text of `element`'s children that are not blocks (its own lines of text), collapsed. */
function looseText(element: Element): string {
  let text = "";
  for (const child of element.children) if (!(isElement(child) && BLOCKS.has(child.name))) text += ` ${textOf(child)}`;
  return normalSpace(text);
}

/** Drops what is unlikely to be content by its tag, role, class or id (never the body, nor an article or main). */
function dropUnlikely(document: Document): void {
  const doomed: Element[] = [];
  for (const element of elements(document)) {
    if (["html", "body", "article", "main"].includes(element.name)) continue;
    if (element.attribs.itemprop === "articleBody") continue;
    const role = element.attribs.role?.toLowerCase();
    if (NOT_MAIN.has(element.name) || (role && UNLIKELY_ROLES.has(role))) {
      doomed.push(element);
      continue;
    }
    const names = classAndId(element);
    if (UNLIKELY.test(names) && !MAYBE.test(names) && !insideTag(element, ["table", "code", "pre"])) doomed.push(element);
  }
  removeAll(doomed);
}

function insideTag(element: Element, names: readonly string[]): boolean {
  for (let parent = element.parent; parent; parent = parent.parent) if (isElement(parent) && names.includes(parent.name)) return true;
  return false;
}

/** Scores paragraphs into their ancestors: the parent in full, the grandparent half, further ones less. */
function score(document: Document, measures: Map<AnyNode, Measure>): Scores {
  const scores: Scores = new Map();
  for (const element of elements(document)) {
    const paragraphLike = SCORED.has(element.name) || (element.name === "div" && !hasBlockChild(element));
    // Text written straight into a block that also holds blocks (lines between <br>s) is a paragraph of that block.
    const loose = !paragraphLike && ["div", "section", "article", "main"].includes(element.name) ? looseText(element) : "";
    if (!paragraphLike && !loose) continue;
    const m = measures.get(element)!;
    const length = loose ? loose.length : m.length;
    if (length < 25) continue;
    const commas = loose ? loose.split(/[,،、，]/).length - 1 : m.commas;
    const points = 1 + commas + Math.min(Math.floor(length / 100), 3);
    let level = 0;
    for (let parent = loose ? element : element.parent; parent && isElement(parent) && level < 5; parent = parent.parent, level++) {
      if (!scores.has(parent)) scores.set(parent, baseScore(parent));
      const share = level === 0 ? 1 : level === 1 ? 2 : level * 3;
      scores.set(parent, scores.get(parent)! + points / share);
    }
  }
  for (const [element, value] of scores) scores.set(element, value * (1 - densityOf(measures.get(element))));
  return scores;
}

/** Candidates compared with the best (Readability's five). */
const TOP_CANDIDATES = 5;
/** Near-best candidates that, sharing an ancestor, make it the article. */
const MIN_NEAR = 3;

/** The ancestors of `element` below <body> (and <html>), nearest first. */
function* ancestorsInBody(element: Element): Generator<Element> {
  for (let parent = element.parent; parent && isElement(parent) && parent.name !== "body" && parent.name !== "html"; parent = parent.parent) yield parent;
}

function isInside(node: AnyNode, ancestor: Element): boolean {
  for (let parent = node.parent; parent; parent = parent.parent) if (parent === ancestor) return true;
  return false;
}

/** The element that holds the main content, with the siblings that belong to it, as a new container. */
function pickMain(scores: Scores, measures: Map<AnyNode, Measure>): Element | null {
  const lengthOf = (element: Element) => measures.get(element)?.length ?? 0;
  const ranked = [...scores].sort((a, b) => b[1] - a[1]).slice(0, TOP_CANDIDATES);
  if (!ranked.length) return null;
  let top = ranked[0]![0];
  // Several candidates scoring nearly as well with an ancestor in common: the article is that ancestor (Readability's rule).
  const near = ranked.slice(1).filter(([, value]) => value >= ranked[0]![1] * 0.75);
  if (near.length >= MIN_NEAR) {
    for (const parent of ancestorsInBody(top)) {
      if (near.filter(([element]) => isInside(element, parent)).length >= MIN_NEAR) {
        top = parent;
        break;
      }
    }
    if (!scores.has(top)) scores.set(top, baseScore(top));
  }
  // A parent that scores nearly as well holds more of the article (Readability's walk up).
  for (const parent of ancestorsInBody(top)) {
    const value = scores.get(parent);
    if (value === undefined || value < scores.get(top)! * 0.75) break;
    if (lengthOf(parent) > lengthOf(top) * 1.5 && densityOf(measures.get(parent)) < 0.3) top = parent;
  }
  // A score that rises again on the way up (above a third of the top's) says more of the article is above (Readability's rule).
  let last = scores.get(top)!;
  const floor = last / 3;
  for (const parent of ancestorsInBody(top)) {
    const value = scores.get(parent);
    if (value === undefined) continue;
    if (value < floor) break;
    if (value > last) {
      top = parent;
      break;
    }
    last = value;
  }
  // A candidate that is its parent's only element is the parent, so its siblings are the parent's (Readability's rule).
  for (const parent of ancestorsInBody(top)) {
    if (parent.children.filter(isElement).length !== 1) break;
    top = parent;
  }
  const parent = top.parent;
  if (!parent || !isElement(parent)) return top;
  const threshold = Math.max(10, scores.get(top)! * 0.2);
  const kept: AnyNode[] = [];
  for (const sibling of parent.children) {
    if (sibling === top) {
      kept.push(sibling);
      continue;
    }
    if (!isElement(sibling)) continue;
    const bonus = sibling.attribs.class && sibling.attribs.class === top.attribs.class ? scores.get(top)! * 0.2 : 0;
    if ((scores.get(sibling) ?? Number.NEGATIVE_INFINITY) + bonus >= threshold) kept.push(sibling);
    else if (sibling.name === "p" || (sibling.name === "div" && !hasBlockChild(sibling))) {
      const length = lengthOf(sibling);
      const density = densityOf(measures.get(sibling));
      if ((length > 80 && density < 0.25) || (length > 0 && length <= 80 && density === 0 && /[.!?。！？]\s*$/.test(textOf(sibling)))) kept.push(sibling);
    }
  }
  if (kept.length === 1) return top;
  return { type: "tag", name: "div", attribs: {}, children: kept, parent: null } as unknown as Element;
}

const SHARE = /(\b|_)(share|sharedaddy)(\b|_)/i;
/** What makes a block of a few words content: a heading, an image, code, a table, a figure. */
const KEEPS_SCRAP = /^(img|h[1-6]|pre|code|table|picture|video|figure)$/;

/** Removes, inside the main content, blocks that are mostly links or say they are not content. */
function clean(container: Element, measures: Map<AnyNode, Measure>): void {
  const doomed: Element[] = [];
  for (const element of elements(container)) {
    if (!["div", "section", "ul", "ol", "table", "figure", "aside", "header"].includes(element.name)) continue;
    if (element.attribs.itemprop === "articleBody") continue;
    const m = measures.get(element);
    if (!m) continue;
    const weight = classWeight(element);
    if (weight < 0) {
      doomed.push(element);
      continue;
    }
    const density = densityOf(m);
    // A share bar, and a block of a few words with nothing but text (a "Print" or "Rate this:" line): Readability's rules.
    const shareBar = m.length < 500 && SHARE.test(classAndId(element));
    const scrap = (element.name === "div" || element.name === "section") && m.length < 25 && ![...elements(element)].some((e) => KEEPS_SCRAP.test(e.name));
    if (shareBar || scrap) {
      doomed.push(element);
      continue;
    }
    if (m.commas >= 10) continue;
    const { paragraphs, items: listItems } = m;
    if ((density > 0.5 && weight < 25) || (density > 0.2 && weight < 25 && m.length < 200 && paragraphs === 0 && listItems === 0)) doomed.push(element);
    else if (element.name !== "ul" && element.name !== "ol" && listItems > paragraphs * 3 && density > 0.3) doomed.push(element);
  }
  removeAll(doomed);
}

/** The words of `text`, lowercased. */
const wordsOf = (text: string) =>
  text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);

/**
 * Removes the first top-level heading that repeats the page's title (the answer carries the title
 * on its own): Readability's rule, a heading whose words are at least 75% the title's.
 */
function dropTitleHeading(document: Document, title: string): void {
  const titleWords = new Set(wordsOf(title));
  if (!titleWords.size) return;
  for (const element of elements(document)) {
    if (element.name !== "h1" && element.name !== "h2") continue;
    const words = wordsOf(textOf(element));
    const extra = words.filter((word) => !titleWords.has(word)).join(" ").length;
    if (words.length && 1 - extra / words.join(" ").length > 0.75) remove(element);
    return;
  }
}

/** The words of a page's description that find its lead paragraph (a description is often cut short). */
const LEAD_PREFIX = 50;

/**
 * `chosen` with the article's lead in front when the lead sits before it, outside it: the smallest
 * block whose text holds the start of the page's description (a standfirst set above the body,
 * which sites repeat as their description). Not a heading, and not when the article itself begins so.
 */
function withLead(document: Document, chosen: Element, description: string, measures: Map<AnyNode, Measure>): Element {
  const prefix = normalSpace(description).slice(0, LEAD_PREFIX);
  // A description that is the article's own first lines is no lead of it.
  if (prefix.length < LEAD_PREFIX || normalSpace(textOf(chosen)).includes(prefix)) return chosen;
  // A lead is about as long as a description, which is short: a page's own long one does not make this search long.
  const limit = Math.min(description.length, 1_000) * 2 + 200;
  const first = chosen.parent ? chosen : (chosen.children.find(isElement) ?? chosen);
  let lead: Element | null = null;
  let leadLength = limit + 1;
  for (const element of elements(document)) {
    if (element === first) break;
    const length = measures.get(element)?.length ?? 0;
    if (length < prefix.length || length >= leadLength) continue;
    if (normalSpace(textOf(element)).includes(prefix)) {
      lead = element;
      leadLength = length;
    }
  }
  // A subtitle set as a heading is not the lead's text.
  if (!lead || isInside(first, lead) || /^h[1-6]$/.test(lead.name)) return chosen;
  const children = chosen.parent ? [chosen] : chosen.children;
  return { type: "tag", name: "div", attribs: {}, children: [lead, ...children], parent: null } as unknown as Element;
}

/** Passes from strictest to most lenient: a page whose content hides under a name that says otherwise still yields it. */
const PASSES = [
  { dropUnlikely: true, clean: true },
  { dropUnlikely: false, clean: true },
  { dropUnlikely: false, clean: false },
] as const;

/** Content shorter than this (characters) is retried more leniently (Readability's rule). */
const ENOUGH = 500;

/**
 * The main content of the page `parse()` returns (a fresh DOM each time, already stripped of what a
 * reader cannot see): an element whose subtree is what to keep. Each pass drops and cleans less,
 * until one keeps ENOUGH text; else the pass that kept the most. Null when no text scores at all.
 */
export function mainContent(parse: () => Document, title = "", description = ""): Element | null {
  let best: { element: Element; length: number } | null = null;
  for (const pass of PASSES) {
    const document = parse();
    dropTitleHeading(document, title);
    if (pass.dropUnlikely) dropUnlikely(document);
    const measures = measure(document);
    let chosen = pickMain(score(document, measures), measures);
    if (!chosen) continue;
    if (pass.clean) clean(chosen, measures);
    chosen = withLead(document, chosen, description, measures);
    const length = normalSpace(textOf(chosen)).length;
    if (length >= ENOUGH) return chosen;
    if (!best || length > best.length) best = { element: chosen, length };
  }
  return best?.element ?? null;
}
