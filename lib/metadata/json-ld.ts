// JSON-LD (schema.org data in <script type="application/ld+json">), read for what a page's meta tags
// may not say: dates, authors, the organisation's logo, the site's name. Read safely: each script's
// text is bounded when collected (parse.ts), bad JSON is ignored, and at most MAX_NODES objects are
// visited, at most MAX_DEPTH levels deep, whatever the JSON holds.

/** What the page's JSON-LD says, as written (strings not yet cleaned, URLs not yet resolved). */
export interface LinkedData {
  datePublished: string | null;
  dateModified: string | null;
  /** The author's name, or several names joined by ", ". */
  author: string | null;
  /** An Organization's logo, else an article publisher's. */
  logo: string | null;
  /** A WebSite's name, else an article publisher's name. */
  siteName: string | null;
}

const MAX_NODES = 2_000;
const MAX_DEPTH = 8;
const MAX_AUTHORS = 10;

type Node = Record<string, unknown>;

const isNode = (value: unknown): value is Node => typeof value === "object" && value !== null && !Array.isArray(value);
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : value === undefined ? [] : [value]);
const text = (value: unknown): string | null => (typeof value === "string" && value.trim() !== "" ? value.trim() : null);

/** The node's types without a vocabulary prefix ("schema:Organization", "https://schema.org/Organization"). */
const typesOf = (node: Node) => list(node["@type"]).flatMap((type) => (typeof type === "string" ? [type.replace(/^.*[/:#]/, "")] : []));
const isOrganization = (node: Node) =>
  typesOf(node).some((type) => /Organization$|^(Corporation|NGO|LocalBusiness|OnlineBusiness|OnlineStore|Airline|Consortium)$/.test(type));

/** Every object in the documents, in document order, breadth first in each (top-level nodes and @graph before what they nest), bounded. */
function nodesOf(documents: readonly unknown[]): Node[] {
  const nodes: Node[] = [];
  for (const document of documents) {
    let level: unknown[] = [document];
    for (let depth = 0; depth < MAX_DEPTH && level.length > 0 && nodes.length < MAX_NODES; depth++) {
      const next: unknown[] = [];
      for (const value of level) {
        if (nodes.length >= MAX_NODES) break;
        if (Array.isArray(value)) {
          next.push(...value.slice(0, MAX_NODES));
        } else if (isNode(value)) {
          nodes.push(value);
          for (const child of Object.values(value)) if (typeof child === "object" && child !== null) next.push(child);
        }
      }
      level = next;
    }
  }
  return nodes;
}

/** Reads the JSON-LD scripts' texts; invalid JSON in one is ignored. */
export function readLinkedData(scripts: readonly string[]): LinkedData {
  const documents: unknown[] = [];
  for (const script of scripts) {
    try {
      documents.push(JSON.parse(script));
    } catch {
      // not JSON: a browser-side template, a truncated script; the page's other scripts still count
    }
  }
  const nodes = nodesOf(documents);
  // A reference ({"@id": ...} alone) stands for the node of that id, as @graph documents link them.
  const byId = new Map<string, Node>();
  for (const node of nodes) if (typeof node["@id"] === "string" && Object.keys(node).length > 1 && !byId.has(node["@id"])) byId.set(node["@id"], node);
  const resolve = (value: unknown): unknown => (isNode(value) && typeof value["@id"] === "string" ? (byId.get(value["@id"]) ?? value) : value);
  const name = (value: unknown) => {
    const person = resolve(value);
    return isNode(person) ? text(person.name) : text(person);
  };
  const imageUrl = (value: unknown): string | null => {
    for (const item of list(value)) {
      const image = resolve(item);
      const url = isNode(image) ? (text(image.url) ?? text(image.contentUrl)) : text(image);
      if (url) return url;
    }
    return null;
  };
  const first = <T>(pick: (node: Node) => T | null): T | null => {
    for (const node of nodes) {
      const value = pick(node);
      if (value !== null) return value;
    }
    return null;
  };
  const publisher = (node: Node) => list(node.publisher).map(resolve).find(isNode) ?? null;
  return {
    datePublished: first((node) => text(node.datePublished)),
    dateModified: first((node) => text(node.dateModified)),
    author: first((node) => {
      const names = list(node.author)
        .slice(0, MAX_AUTHORS)
        .map(name)
        .filter((n): n is string => n !== null);
      return names.length ? names.join(", ") : null;
    }),
    logo: first((node) => (isOrganization(node) ? imageUrl(node.logo) : null)) ?? first((node) => imageUrl(publisher(node)?.logo)),
    siteName: first((node) => (typesOf(node).includes("WebSite") ? text(node.name) : null)) ?? first((node) => text(publisher(node)?.name)),
  };
}
