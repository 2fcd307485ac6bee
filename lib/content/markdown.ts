import { type AnyNode, BLOCKS, type ChildNode, type Element, isElement } from "./dom.js";
import { preText, toText } from "./text.js";

// Content as Markdown (CommonMark with GitHub's tables): headings, paragraphs, lists (nested and
// numbered), tables, code blocks (with the language the page names), quotes, emphasis, inline code,
// links and images with absolute URLs. Only the page's own text is written: nothing is invented,
// and Markdown's own characters in the text are escaped so that they stay text.

/** The Markdown of `root`, whose relative links resolve against `base` (none: only absolute links are links). */
export function toMarkdown(root: AnyNode, base: string | null): string {
  const out = blocks(children(root), { base, depth: 0, level: 0 });
  return `${out.replace(/\n{3,}/g, "\n\n").trim()}\n`;
}

interface Context {
  readonly base: string | null;
  /** List nesting. */
  readonly depth: number;
  /** Block nesting: past MAX_LEVEL, a block's content is written as plain text (no recursion on hostile nesting). */
  readonly level: number;
}

const MAX_LEVEL = 64;

const children = (node: AnyNode): ChildNode[] => (node as { children?: ChildNode[] }).children ?? [];

const absolute = (href: string | undefined, base: string | null): string | null => {
  if (!href) return null;
  try {
    const url = base === null ? new URL(href) : new URL(href, base);
    return url.protocol === "http:" || url.protocol === "https:" || url.protocol === "mailto:" ? url.href : null;
  } catch {
    return null;
  }
};

/** Text as Markdown text: its own `*`, `_`, `` ` ``, `[`, `]`, `<`, `#` at a line start and the like escaped. */
const escapeMarkdown = (text: string) => text.replace(/([\\`*_[\]<>|])/g, "\\$1").replace(/^(\s*)([#+-]|\d+\.)(\s)/, "$1\\$2$3");

/** The inline Markdown of `nodes` (one paragraph's worth), whitespace collapsed. */
function inline(nodes: readonly ChildNode[], context: Context): string {
  let out = "";
  // Iterative over a work list of strings and nodes, so that deep inline nesting cannot exhaust the stack.
  const work: (ChildNode | string)[] = [...nodes].reverse();
  while (work.length) {
    const item = work.pop()!;
    if (typeof item === "string") {
      out += item;
      continue;
    }
    if (item.type === "text") {
      out += escapeMarkdown((item as { data: string }).data.replace(/\s+/g, " "));
      continue;
    }
    if (!isElement(item)) continue;
    const push = (before: string, after: string) => {
      work.push(after);
      for (let i = item.children.length - 1; i >= 0; i--) work.push(item.children[i]!);
      work.push(before);
    };
    switch (item.name) {
      case "br":
        out += "  \n";
        break;
      case "strong":
      case "b":
        push("**", "**");
        break;
      case "em":
      case "i":
        push("*", "*");
        break;
      case "del":
      case "s":
        push("~~", "~~");
        break;
      case "code":
      case "kbd":
      case "samp": {
        const code = preText(item).replace(/\s+/g, " ");
        const fence = code.includes("`") ? "``" : "`";
        out += code ? `${fence}${code.includes("`") ? ` ${code} ` : code}${fence}` : "";
        break;
      }
      case "a": {
        const href = absolute(item.attribs.href, context.base);
        if (href) push("[", `](${href.replace(/[()\s]/g, encodeURIComponent)})`);
        else push("", "");
        break;
      }
      case "img": {
        const src = absolute(item.attribs.src ?? item.attribs["data-src"], context.base);
        const alt = (item.attribs.alt ?? "").replace(/\s+/g, " ").trim();
        if (src && alt) out += `![${escapeMarkdown(alt)}](${src.replace(/[()\s]/g, encodeURIComponent)})`;
        else if (alt) out += escapeMarkdown(alt);
        break;
      }
      default:
        push("", BLOCKS.has(item.name) ? " " : "");
    }
  }
  return out
    .replace(/[ \t]+/g, " ")
    .replace(/ +\n/g, "  \n")
    .trim();
}

/** The code block language a page names: class "language-x" or "lang-x" on the <pre> or its <code>. */
function languageOf(pre: Element): string {
  const code = pre.children.find((c): c is Element => isElement(c) && c.name === "code");
  for (const element of [pre, code]) {
    const match = /(?:^|\s)(?:language|lang)-([\w+#.-]+)/.exec(element?.attribs.class ?? "");
    if (match) return match[1]!;
  }
  return "";
}

function codeBlock(pre: Element): string {
  const code = preText(pre);
  const longest = (code.match(/`+/g) ?? []).reduce((most, run) => Math.max(most, run.length), 2);
  const fence = "`".repeat(longest + 1);
  return `${fence}${languageOf(pre)}\n${code}\n${fence}`;
}

function table(element: Element, context: Context): string {
  const rows: string[][] = [];
  let header = false;
  const stack: AnyNode[] = [element];
  while (stack.length) {
    const node = stack.pop()!;
    if (!isElement(node)) continue;
    if (node.name === "tr") {
      const cells = node.children.filter((c): c is Element => isElement(c) && (c.name === "td" || c.name === "th"));
      if (rows.length === 0 && cells.some((c) => c.name === "th")) header = true;
      // inline() escapes a cell's own "|".
      rows.push(cells.map((cell) => inline(cell.children, context).replace(/\s*\n\s*/g, " ")));
      continue;
    }
    // A nested table is flattened into its cell by inline(); rows are the outer table's.
    if (node !== element && node.name === "table") continue;
    for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]!);
  }
  if (!rows.length) return "";
  // Not Math.max(...rows): a table of 200,000 rows would overflow the call stack.
  const width = rows.reduce((most, row) => Math.max(most, row.length), 0);
  const line = (cells: string[]) => `| ${Array.from({ length: width }, (_, i) => cells[i] ?? "").join(" | ")} |`;
  const [first, ...rest] = header ? rows : [Array<string>(width).fill(""), ...rows];
  return [line(first!), `| ${Array<string>(width).fill("---").join(" | ")} |`, ...rest.map(line)].join("\n");
}

function list(element: Element, context: Context): string {
  const ordered = element.name === "ol";
  let number = Number(element.attribs.start ?? 1) || 1;
  const items: string[] = [];
  for (const item of element.children) {
    if (!isElement(item) || item.name !== "li") continue;
    const marker = ordered ? `${number++}.` : "-";
    // A tight list: an item's text and its own sublist on consecutive lines.
    const body = blocks(item.children, { ...context, depth: context.depth + 1 })
      .trim()
      .replace(/\n{2,}/g, "\n");
    const indent = " ".repeat(marker.length + 1);
    items.push(`${marker} ${body.replace(/\n/g, `\n${indent}`)}`);
  }
  return items.join("\n");
}

/** The Markdown of a run of nodes: inline content gathered into paragraphs, blocks written as blocks. */
function blocks(nodes: readonly ChildNode[], outer: Context): string {
  const context = { ...outer, level: outer.level + 1 };
  if (context.level > MAX_LEVEL)
    return nodes
      .map((node) => escapeMarkdown(toText(node)))
      .filter(Boolean)
      .join("\n\n");
  const parts: string[] = [];
  let run: ChildNode[] = [];
  const flush = () => {
    const text = inline(run, context);
    if (text) parts.push(text);
    run = [];
  };
  for (const node of nodes) {
    if (!isElement(node) || !(BLOCKS.has(node.name) || node.name === "img")) {
      run.push(node);
      continue;
    }
    if (node.name === "img") {
      run.push(node);
      continue;
    }
    flush();
    const heading = /^h([1-6])$/.exec(node.name);
    if (heading) {
      const text = inline(node.children, context);
      if (text) parts.push(`${"#".repeat(Number(heading[1]))} ${text}`);
    } else if (node.name === "p") {
      const text = inline(node.children, context);
      if (text) parts.push(text);
    } else if (node.name === "pre") parts.push(codeBlock(node));
    else if (node.name === "ul" || node.name === "ol") {
      const text = list(node, context);
      if (text) parts.push(text);
    } else if (node.name === "table") {
      const text = table(node, context);
      if (text) parts.push(text);
    } else if (node.name === "blockquote") {
      const text = blocks(node.children, context).trim();
      if (text) parts.push(text.replace(/^/gm, "> "));
    } else if (node.name === "hr") parts.push("---");
    else parts.push(blocks(node.children, context));
  }
  flush();
  return parts.filter(Boolean).join("\n\n");
}
