import { createHash } from "node:crypto";
import { gunzipSync, gzipSync } from "node:zlib";
import { GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { documents } from "../billing/dynamodb.js";
import { config } from "../config.js";
import { describeError, log } from "../log.js";
import { JOB_RETENTION_DAYS } from "../packaging.js";

// Copies of the pages an account's crawls with maxAge delivered (docs/crawl.md, "maxAge"): a later
// crawl of the same account that asks for pages no older than its maxAge takes a page's copy
// instead of asking the site again. A copy is what a delivery needs besides its output (kept in the bucket with its
// crawl): where the page led, its title, its text's hash for duplicates, and its links to follow.
// Keyed by the account and how the page is read (URL, formats, scope, render and page controls),
// so another account, or another way of reading it, never meets it. A crawl that sends credentials
// (headers, cookies, basic auth) neither keeps nor takes copies: what they unlock is theirs alone.

/** A copy's links, gzipped, at most this many bytes: a page with more is not kept. */
const MAX_LINKS_BYTES = 256 * 1024;

/** What a crawl keeps of a page it delivered, for its account's later crawls. */
export interface PageCopy {
  /** When it was read (epoch ms). */
  readonly at: number;
  /** Its output in the bucket: JSON with the formats asked (its crawl's, kept as long as it). */
  readonly outputKey: string;
  readonly finalUrl: string;
  /** The canonical URL it names, if any (a later crawl that has that URL skips it as a duplicate). */
  readonly canonical: string | null;
  readonly httpStatus: number;
  readonly rendered: boolean;
  readonly title: string | undefined;
  /** Its text and links' hash (lib/crawl/run.ts), null when it has no text. */
  readonly textHash: string | null;
  readonly links: readonly string[];
  readonly nofollow: boolean;
}

/** How a crawl reads a page, as far as a copy is concerned: null when it sends credentials (no copies). */
export interface ReadWay {
  readonly formats: readonly string[];
  readonly scope: string;
  readonly render: string;
  readonly options: { readonly headers?: Record<string, string>; readonly cookies?: readonly unknown[]; readonly httpAuth?: unknown };
}

/** The key of `accountId`'s copy of `url` read `way`, or null when that way takes no copies. */
export function copyKeyOf(accountId: string, url: string, way: ReadWay): { pk: string; sk: string } | null {
  const { options } = way;
  if (Object.keys(options.headers ?? {}).length || options.cookies?.length || options.httpAuth) return null;
  const fingerprint = createHash("sha256")
    .update(stableJson([url, [...way.formats].sort(), way.scope, way.render, options]))
    .digest("base64url");
  return { pk: `CRAWLCOPY#${accountId}#${fingerprint}`, sk: "COPY" };
}

/** JSON of `value` with every object's keys sorted: the same options read back from the table (in any order) are the same text. */
const stableJson = (value: unknown): string =>
  JSON.stringify(value, (_key, inner: unknown) =>
    inner && typeof inner === "object" && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : inner,
  );

/**
 * Keeps `copy` under `key` (as long as its output), unless it is too large to keep (its links
 * gzipped past MAX_LINKS_BYTES, or the whole past what an item holds): a copy not kept is a page
 * read again later, so a failure to keep one is logged, not the page's.
 */
export async function keepCopy(key: { pk: string; sk: string }, copy: PageCopy): Promise<void> {
  const links = gzipSync(JSON.stringify(copy.links));
  if (
    links.length > MAX_LINKS_BYTES ||
    Buffer.byteLength(copy.finalUrl) + Buffer.byteLength(copy.canonical ?? "") + Buffer.byteLength(copy.title ?? "") > 64 * 1024
  )
    return;
  await documents
    .send(
      new PutCommand({
        TableName: config.TABLE_NAME,
        Item: { ...key, ...copy, links, expiresAt: Math.floor(copy.at / 1000) + JOB_RETENTION_DAYS * 86_400 },
      }),
    )
    .catch((error: unknown) => log.warn("a crawl page's copy could not be kept", { key: key.pk, error: describeError(error) }));
}

/** The copy under `key` read at `notBefore` or later (epoch ms), or null. */
export async function copySince(key: { pk: string; sk: string }, notBefore: number): Promise<PageCopy | null> {
  const { Item } = await documents.send(new GetCommand({ TableName: config.TABLE_NAME, Key: key }));
  if (!Item || Number(Item.at) < notBefore) return null;
  const { pk: _pk, sk: _sk, expiresAt: _expires, links, ...copy } = Item;
  return { ...(copy as Omit<PageCopy, "links">), links: JSON.parse(gunzipSync(links as Uint8Array).toString("utf8")) as string[] };
}
