import { type AnyNode, type ChildNode, type Document, DomHandler, type Element } from "domhandler";
import { Parser } from "htmlparser2";

// A page's DOM as htmlparser2 builds it (no browser: docs/api.md, "Content"), and the few questions
// extraction asks of it.

export type { AnyNode, ChildNode, Document, Element };

/**
 * Chromium's HTML parser nests elements at most this deep (deeper ones become siblings there); so
 * does ours: htmlparser2's open-element stack costs time in its depth for every tag, so a page
 * nesting 100,000 elements took seconds, and a few MB of them hours.
 */
const MAX_DEPTH = 512;

/** htmlparser2's parser, but an element opened at MAX_DEPTH first closes the innermost one (relies on its `stack` and `popElement`: the version is pinned). */
class ShallowParser extends Parser {
  override onopentagname(start: number, endIndex: number): void {
    const self = this as unknown as { stack: string[]; popElement(implied: boolean): void };
    if (self.stack.length >= MAX_DEPTH) self.popElement(true);
    super.onopentagname(start, endIndex);
  }
}

/** Parses `html` leniently, as a browser would keep its text (entities decoded, tags lower-cased), at most MAX_DEPTH deep. */
export function parseHtml(html: string): Document {
  const handler = new DomHandler();
  new ShallowParser(handler, { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true }).end(html);
  return handler.root;
}

export const isElement = (node: AnyNode): node is Element => node.type === "tag" || node.type === "script" || node.type === "style";

/** Elements that start a new block of text (a line break before and after in text; a paragraph in markdown). */
export const BLOCKS = new Set([
  "address",
  "article",
  "aside",
  "blockquote",
  "body",
  "dd",
  "details",
  "dialog",
  "div",
  "dl",
  "dt",
  "fieldset",
  "figcaption",
  "figure",
  "footer",
  "form",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "header",
  "hr",
  "li",
  "main",
  "nav",
  "ol",
  "p",
  "pre",
  "section",
  "summary",
  "table",
  "tbody",
  "td",
  "tfoot",
  "th",
  "thead",
  "tr",
  "ul",
]);

/** Every element under `root` (depth first, document order), without recursion (pages nest deeply). */
export function* elements(root: AnyNode): Generator<Element> {
  const stack: AnyNode[] = [root];
  while (stack.length) {
    const node = stack.pop()!;
    if (isElement(node) && node !== root) yield node;
    const children = (node as { children?: ChildNode[] }).children;
    if (children) for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
}

/** The text under `node`, as it is in the source (whitespace kept; with `breaks`, a <br> as a line break). */
export function textOf(node: AnyNode, breaks = false): string {
  let text = "";
  const stack: AnyNode[] = [node];
  while (stack.length) {
    const current = stack.pop()!;
    if (current.type === "text") text += (current as { data: string }).data;
    else if (breaks && isElement(current) && current.name === "br") text += "\n";
    else {
      const children = (current as { children?: ChildNode[] }).children;
      if (children && !(isElement(current) && (current.name === "script" || current.name === "style")))
        for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
    }
  }
  return text;
}

/** Removes `node` from its parent. */
export const remove = (node: ChildNode): void => removeAll([node]);

/**
 * Removes every node of `nodes` from its parent: each parent's children filtered once (removing
 * them one by one, each found by its index, took 20 s over 100,000 siblings).
 */
export function removeAll(nodes: Iterable<ChildNode>): void {
  const byParent = new Map<{ children: ChildNode[] }, Set<ChildNode>>();
  for (const node of nodes) {
    const parent = node.parent as { children: ChildNode[] } | null;
    if (!parent) continue;
    const doomed = byParent.get(parent) ?? new Set();
    byParent.set(parent, doomed.add(node));
  }
  for (const [parent, doomed] of byParent) {
    const kept = parent.children.filter((child) => !doomed.has(child));
    kept.forEach((child, i) => {
      child.prev = kept[i - 1] ?? null;
      child.next = kept[i + 1] ?? null;
    });
    parent.children = kept;
    for (const node of doomed) {
      node.parent = null;
      node.prev = null;
      node.next = null;
    }
  }
}
