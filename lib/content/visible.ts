import { type Document, type Element, elements, remove } from "./dom.js";
import { styleVerdict } from "./styles.js";

// Text a reader cannot see is not content (docs/api.md, "Content"): a page can hide instructions
// aimed at the agent reading it. What the markup says is hidden goes (the `hidden` attribute,
// aria-hidden="true", closed <details> bodies), and what the styles hide: without a browser as
// lib/content/styles.ts reads them, in the browser as lib/content/browser.ts marks them.

/** The attribute the browser path sets on elements that are not drawn at all (with all they hold). */
export const HIDDEN_MARK = "data-shotline-hidden";
/** The attribute the browser path sets on elements whose own text a reader cannot see. */
export const TEXT_HIDDEN_MARK = "data-shotline-hidden-text";

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

/** Why this reader cannot prove what `document` shows (a linked stylesheet, a script, a style it cannot evaluate), or null. */
export function unprovenStatically(document: Document): string | null {
  for (const element of elements(document)) {
    if (element.name === "link" && /(^|\s)stylesheet(\s|$)/i.test(element.attribs.rel ?? "")) return "a linked stylesheet";
    if (element.name === "script" && !/json|template|text\/(x-)?(html|markdown)/i.test(element.attribs.type ?? "")) return "a script";
    if (Object.keys(element.attribs).some((name) => name.startsWith("on"))) return "an event handler attribute";
  }
  return styleVerdict(document, styleSheets(document)).unproven;
}

/**
 * Removes from `document` everything a reader cannot see, and what is never a reader's text:
 * judged by the page's own styles ("static"), or by the marks the browser path set ("marked").
 */
export function removeInvisible(document: Document, judged: "static" | "marked"): void {
  const verdict = judged === "static" ? styleVerdict(document, styleSheets(document)) : null;
  const doomed: Element[] = [];
  const mute: Element[] = [];
  for (const element of elements(document)) {
    if (NEVER_TEXT.has(element.name) || isHidden(element) || verdict?.hidden.has(element)) doomed.push(element);
    else if (verdict ? verdict.textHidden.has(element) : TEXT_HIDDEN_MARK in element.attribs) mute.push(element);
    // A closed <details> shows its summary only.
    if (element.name === "details" && !("open" in element.attribs)) {
      const summary = element.children.find((child) => child.type === "tag" && (child as Element).name === "summary");
      for (const child of [...element.children]) if (child !== summary) remove(child);
    }
  }
  // Children of a removed element go with it; removing them first is harmless.
  for (const element of doomed) remove(element);
  for (const element of mute) for (const child of [...element.children]) if (child.type === "text") remove(child);
  // Comments and processing instructions are not text.
  const stack: Document["children"][number][] = [...document.children];
  while (stack.length) {
    const node = stack.pop()!;
    if (node.type === "comment" || node.type === "directive") remove(node);
    else if ("children" in node) for (const child of node.children) stack.push(child);
  }
}
