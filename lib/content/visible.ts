import { type Document, type Element, elements, remove } from "./dom.js";

// Text a reader cannot see is not content (docs/api.md, "Content"): a page can hide instructions
// aimed at the agent reading it. Without a browser, what the markup itself says is hidden goes:
// the `hidden` attribute, aria-hidden="true", and inline styles that hide (display:none,
// visibility:hidden, zero size with overflow hidden, opacity 0, off-screen positioning, text in
// the colour of its background, a font size of 0, clipping to nothing). The browser path marks
// what its computed styles hide (lib/content/browser.ts) with HIDDEN_MARK, removed here too.

/** The attribute the browser path sets on elements whose computed style hides them. */
export const HIDDEN_MARK = "data-shotline-hidden";

/** Elements that are never a reader's text. */
const NEVER_TEXT = new Set([
  "script",
  "style",
  "noscript",
  "template",
  "head",
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

/** An inline style's declarations, lower-cased, as name -> value. */
function declarations(style: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const part of style.toLowerCase().split(";")) {
    const colon = part.indexOf(":");
    if (colon > 0)
      found.set(
        part.slice(0, colon).trim(),
        part
          .slice(colon + 1)
          .replace(/!important/g, "")
          .trim(),
      );
  }
  return found;
}

const ZERO = /^(0|0?\.0+)(px|em|rem|%|pt|vh|vw)?$/;
const FAR = /^-\d{3,}(\.\d+)?(px|em|rem|pt)?$/;

/** Whether an inline style hides its element's text. */
function hidesByStyle(style: string): boolean {
  const css = declarations(style);
  const value = (name: string) => css.get(name) ?? "";
  if (value("display") === "none" || value("visibility") === "hidden" || value("visibility") === "collapse") return true;
  if (value("content-visibility") === "hidden") return true;
  if (ZERO.test(value("opacity"))) return true;
  if (ZERO.test(value("font-size"))) return true;
  const clipped = value("overflow") === "hidden" || value("overflow") === "clip";
  if (clipped && (ZERO.test(value("height")) || ZERO.test(value("width")) || ZERO.test(value("max-height")) || ZERO.test(value("max-width")))) return true;
  if (/rect\(\s*0(px)?[\s,]+0(px)?[\s,]+0(px)?[\s,]+0(px)?\s*\)/.test(value("clip")) || /inset\(\s*(50%|100%)/.test(value("clip-path"))) return true;
  if (value("position") === "absolute" || value("position") === "fixed") {
    for (const side of ["left", "top", "right", "bottom", "text-indent"]) if (FAR.test(value(side))) return true;
  }
  if (FAR.test(value("text-indent"))) return true;
  if (/translate[xy]?\(\s*-\d{3,}/.test(value("transform"))) return true;
  const color = value("color");
  const background = value("background-color") || value("background");
  if (color && background && normalColor(color) === normalColor(background)) return true;
  return false;
}

const normalColor = (value: string) => {
  const named: Record<string, string> = { white: "#ffffff", black: "#000000", "#fff": "#ffffff", "#000": "#000000" };
  const v = value.replace(/\s+/g, "");
  const rgb = /^rgba?\((\d+),(\d+),(\d+)/.exec(v);
  if (rgb) return `#${[rgb[1], rgb[2], rgb[3]].map((n) => Number(n).toString(16).padStart(2, "0")).join("")}`;
  return named[v] ?? v;
};

/** Whether `element` is hidden by its markup (or marked hidden by the browser path). */
function isHidden(element: Element): boolean {
  const a = element.attribs;
  if (HIDDEN_MARK in a || "hidden" in a) return true;
  if (a["aria-hidden"]?.trim().toLowerCase() === "true") return true;
  if (element.name === "input" && a.type?.toLowerCase() === "hidden") return true;
  return a.style !== undefined && hidesByStyle(a.style);
}

/** A simple selector of a page's own stylesheet: `tag`, `.class`, `#id`, or `tag.class`. */
type Simple = { readonly tag: string | null; readonly className: string | null; readonly id: string | null };

/** Style rules at most read from a page's <style> blocks (a hostile page may hold millions). */
const MAX_RULES = 5_000;

/**
 * The simple selectors that a page's own <style> blocks hide (by declarations hidesByStyle reads).
 * Rules with combinators, pseudo-classes or attributes, and external stylesheets, are seen only by
 * the browser path, whose computed styles see everything.
 */
function hiddenSelectors(document: Document): Simple[] {
  const sheets: string[] = [];
  for (const element of elements(document))
    if (element.name === "style") for (const child of element.children) if (child.type === "text") sheets.push((child as { data: string }).data);
  const found: Simple[] = [];
  let rules = 0;
  for (const sheet of sheets) {
    for (const [, selectors, body] of sheet.replace(/\/\*[\s\S]*?\*\//g, "").matchAll(/([^{}@]+)\{([^{}]*)\}/g)) {
      if (++rules > MAX_RULES) return found;
      if (!hidesByStyle(body!)) continue;
      for (const selector of selectors!.split(",")) {
        const match = /^\s*([a-z][a-z0-9-]*)?(?:\.([\w-]+)|#([\w-]+))?\s*$/i.exec(selector);
        if (match && (match[1] || match[2] || match[3]) && !(match[1] && !match[2] && !match[3] && ["html", "body"].includes(match[1].toLowerCase())))
          found.push({ tag: match[1]?.toLowerCase() ?? null, className: match[2] ?? null, id: match[3] ?? null });
      }
    }
  }
  return found;
}

const matches = (element: Element, selector: Simple) =>
  (selector.tag === null || element.name === selector.tag) &&
  (selector.className === null || (element.attribs.class ?? "").split(/\s+/).includes(selector.className)) &&
  (selector.id === null || element.attribs.id === selector.id);

/** Removes from `document` everything a reader cannot see, and what is never a reader's text. */
export function removeInvisible(document: Document): void {
  const sheetHidden = hiddenSelectors(document);
  const doomed: Element[] = [];
  for (const element of elements(document))
    if (NEVER_TEXT.has(element.name) || isHidden(element) || sheetHidden.some((selector) => matches(element, selector))) doomed.push(element);
  // Children of a removed element go with it; removing them first is harmless.
  for (const element of doomed) remove(element);
  // Comments and processing instructions are not text.
  const stack: Document["children"][number][] = [...document.children];
  while (stack.length) {
    const node = stack.pop()!;
    if (node.type === "comment" || node.type === "directive") remove(node);
    else if ("children" in node) for (const child of node.children) stack.push(child);
  }
}
