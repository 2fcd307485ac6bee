import { type AnyNode, BLOCKS, type ChildNode, isElement, textOf } from "./dom.js";

// Content as plain text: each block on its own line (a blank line between paragraphs), whitespace
// inside a block collapsed as a browser collapses it, preformatted text kept as it is.

/** The text of `root`, block by block. */
export function toText(root: AnyNode): string {
  const lines: string[] = [];
  let line = "";
  const flush = () => {
    const trimmed = line.replace(/[ \t]+/g, " ").trim();
    if (trimmed) lines.push(trimmed);
    line = "";
  };
  // Iterative walk: [node, leaving?] pairs, so that deep pages cannot exhaust the stack.
  const stack: [AnyNode, boolean, boolean][] = [[root, false, false]];
  while (stack.length) {
    const [node, leaving, pre] = stack.pop()!;
    if (node.type === "text") {
      const data = (node as { data: string }).data;
      line += pre ? data : data.replace(/\s+/g, " ");
      continue;
    }
    const block = isElement(node) && BLOCKS.has(node.name);
    if (leaving) {
      if (block) flush();
      continue;
    }
    if (isElement(node) && node.name === "br") {
      flush();
      continue;
    }
    if (block) flush();
    const inPre = pre || (isElement(node) && node.name === "pre");
    if (inPre && isElement(node) && node.name === "pre") {
      // A code block keeps its lines.
      flush();
      lines.push(preText(node));
      continue;
    }
    stack.push([node, true, inPre]);
    const children = (node as { children?: ChildNode[] }).children ?? [];
    for (let i = children.length - 1; i >= 0; i--) stack.push([children[i]!, false, inPre]);
  }
  flush();
  return lines.join("\n\n");
}

/** The text under `node` as it is (a <br> a line break), without its outer blank lines: a <pre>'s. */
export const preText = (node: AnyNode): string => textOf(node, true).replace(/^\n+|\s+$/g, "");
