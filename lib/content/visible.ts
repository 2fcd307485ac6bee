import { type ChildNode, type Document, type Element, elements, isElement, removeAll } from "./dom.js";
import { type StyleVerdict, styleVerdict } from "./styles.js";

// Text a reader cannot see is not content (docs/api.md, "Content"): a page can hide instructions
// aimed at the agent reading it. What the markup says is hidden goes (the `hidden` attribute,
// aria-hidden="true", closed <details> bodies), and what the styles hide: without a browser as
// lib/content/styles.ts reads them, in the browser as lib/content/browser.ts marks them.

/** The attribute the browser path sets on elements that are not drawn at all (with all they hold). */
export const HIDDEN_MARK = "data-shotline-hidden";
/** The attribute the browser path sets on elements whose own text a reader cannot see. */
export const TEXT_HIDDEN_MARK = "data-shotline-hidden-text";

/**
 * Elements that are never a reader's text. Not <head> itself: a page without <body> tags has its
 * body inside it as this parser reads it (a browser implies the body), so only what <head> is for goes.
 */
const NEVER_TEXT = new Set([
  "script",
  "style",
  "noscript",
  "template",
  "title",
  "base",
  "meta",
  "link",
  "iframe",
  "object",
  "embed",
  "canvas",
  "svg",
  "math",
  "select",
  "option",
  "button",
  "input",
  "textarea",
  "dialog",
]);

/** Whether `element` is hidden by its markup (or marked not drawn by the browser path). */
function isHidden(element: Element): boolean {
  const a = element.attribs;
  if (HIDDEN_MARK in a || "hidden" in a) return true;
  return a["aria-hidden"]?.trim().toLowerCase() === "true";
}

/** The page's own style sheets, in order (a <style> for another medium under its media query). */
function styleSheets(document: Document): string[] {
  const sheets: string[] = [];
  for (const element of elements(document))
    if (element.name === "style") {
      const text = element.children.map((child) => (child.type === "text" ? (child as { data: string }).data : "")).join("");
      sheets.push(element.attribs.media ? `@media ${element.attribs.media}{${text}}` : text);
    }
  return sheets;
}

/** What in `document`'s markup can change how it looks after it loads (a linked stylesheet, a script, an event handler), or null. */
function changesAfterLoad(document: Document): string | null {
  for (const element of elements(document)) {
    if (element.name === "link" && /(^|\s)stylesheet(\s|$)/i.test(element.attribs.rel ?? "")) return "a linked stylesheet";
    if (element.name === "script" && !/json|template|text\/(x-)?(html|markdown)/i.test(element.attribs.type ?? "")) return "a script";
    if (Object.keys(element.attribs).some((name) => name.startsWith("on"))) return "an event handler attribute";
  }
  return null;
}

/** Why this reader cannot prove what `document` shows (a linked stylesheet, a script, a style it cannot evaluate), or null. */
export function unprovenStatically(document: Document): string | null {
  return changesAfterLoad(document) ?? styleVerdict(document, styleSheets(document)).unproven;
}

/** The length of the text `verdict` (none: only the markup) leaves a reader. */
function shownLength(document: Document, verdict: StyleVerdict | null): number {
  let length = 0;
  const stack: [Document["children"][number], boolean][] = document.children.map((child) => [child, false]);
  while (stack.length) {
    const [node, muted] = stack.pop()!;
    if (node.type === "text") {
      if (!muted) length += (node as { data: string }).data.trim().length;
      continue;
    }
    if (!isElement(node)) continue;
    if (NEVER_TEXT.has(node.name) || isHidden(node) || verdict?.hidden.has(node)) continue;
    const mute = verdict?.textHidden.has(node) ?? false;
    for (const child of node.children) stack.push([child, mute]);
  }
  return length;
}

/** The share of its text a page that can still change shows before its own styles' verdict is doubted. */
const SHOWN_AT_LEAST = 0.25;

/**
 * The verdict of `document`'s own styles. A page that cannot change after it loads keeps every
 * verdict (and `render: "auto"` reads only such pages without a browser). On a page that can (a
 * script, a linked stylesheet), text whose colour its own styles never set is not judged by its
 * contrast (the stylesheet this reader does not see may well set it: a dark body with a light
 * article box); and if its styles still hide most of its text (a guard against a flash of unstyled
 * content, waiting for its stylesheet), the page is not showing itself as it will: it is read
 * without its <style> blocks, then without its inline styles too.
 */
function ownStylesVerdict(document: Document): StyleVerdict | null {
  if (changesAfterLoad(document) === null) return styleVerdict(document, styleSheets(document));
  const verdict = styleVerdict(document, styleSheets(document), { textColour: "unknown" });
  const least = shownLength(document, null) * SHOWN_AT_LEAST;
  if (shownLength(document, verdict) >= least) return verdict;
  const inline = styleVerdict(document, [], { textColour: "unknown" });
  return shownLength(document, inline) >= least ? inline : null;
}

/**
 * Removes from `document` everything a reader cannot see, and what is never a reader's text:
 * judged by the page's own styles ("static"), or by the marks the browser path set ("marked").
 */
export function removeInvisible(document: Document, judged: "static" | "marked"): void {
  const verdict = judged === "static" ? ownStylesVerdict(document) : null;
  const doomed: Element[] = [];
  const mute: Element[] = [];
  for (const element of elements(document)) {
    if (NEVER_TEXT.has(element.name) || isHidden(element) || verdict?.hidden.has(element)) doomed.push(element);
    else if (verdict ? verdict.textHidden.has(element) : TEXT_HIDDEN_MARK in element.attribs) mute.push(element);
    // A closed <details> shows its summary only.
    if (element.name === "details" && !("open" in element.attribs)) {
      const summary = element.children.find((child) => child.type === "tag" && (child as Element).name === "summary");
      removeAll(element.children.filter((child) => child !== summary));
    }
  }
  // Children of a removed element go with it; removing them first is harmless.
  removeAll(doomed);
  removeAll(mute.flatMap((element) => element.children.filter((child) => child.type === "text")));
  // Comments and processing instructions are not text.
  const stack: Document["children"][number][] = [...document.children];
  const notText: ChildNode[] = [];
  while (stack.length) {
    const node = stack.pop()!;
    if (node.type === "comment" || node.type === "directive") notText.push(node);
    else if ("children" in node) for (const child of node.children) stack.push(child);
  }
  removeAll(notText);
}
