// A crawl's URLs (docs/crawl.md): each one normalised before it is queued, so that the frontier
// holds one row per page however it is linked; its scope (the start's host, its subdomains when
// asked, the include and exclude globs); and the shapes of URL that only a trap makes.

/** Query parameters that say where a visitor came from, not what the page is: removed. */
const TRACKING =
  /^(utm_[a-z_]+|gclid|gclsrc|dclid|fbclid|msclkid|gbraid|wbraid|yclid|twclid|igshid|mc_cid|mc_eid|_ga|_gl|_hsenc|_hsmi|mkt_tok|ref_src|oly_anon_id|oly_enc_id|vero_id|wickedid|__s)$/i;
/** Query parameters that carry a visitor's session: removed (a session in a link makes every page new on every visit). */
const SESSION = /^(sid|sessionid|session_id|session|phpsessid|jsessionid|aspsessionid[a-z]*|cfid|cftoken|zenid|oscsid|s_id)$/i;
/** A session carried as a path parameter (`/page;jsessionid=...`). */
const PATH_SESSION = /;(jsessionid|phpsessid|sid|sessionid)=[^/?#]*/gi;

/** The longest URL a crawl queues, in characters (the sitemap protocol's own limit). */
export const MAX_URL_LENGTH = 2_048;
/** The most path segments a queued URL may have. */
const MAX_SEGMENTS = 32;
/** A path segment (or run of segments) repeated this many times is a trap (`/a/b/a/b/a/b`). */
const REPEATS = 3;

/** A query piece's name, decoded (`utm%5Fsource` is utm_source). */
const nameOf = (piece: string) => {
  const raw = piece.split("=", 1)[0]!.replace(/\+/g, " ");
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
};
const dropped = (name: string) => TRACKING.test(name) || SESSION.test(name);

/** An escape as RFC 3986 normalises it: an unreserved character as itself, any other in upper case. */
const unescapeUnreserved = (encoded: string) => {
  const char = String.fromCharCode(Number.parseInt(encoded.slice(1), 16));
  return /[A-Za-z0-9\-._~]/.test(char) ? char : encoded.toUpperCase();
};

/**
 * `href` as the frontier keys it, or null when it is not an http(s) URL: fragment dropped, scheme
 * and host lower-cased, default port dropped, dot segments resolved (the URL parser's own normal form), escapes of
 * unreserved characters decoded (`%7E` as `~`), tracking and session parameters removed, the rest
 * sorted by name (stable within a name) and kept as written, credentials dropped.
 */
export function normalizeUrl(href: string, base?: string): string | null {
  let url: URL;
  try {
    url = new URL(href.trim(), base);
  } catch {
    return null;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return null;
  url.hash = "";
  url.username = "";
  url.password = "";
  url.pathname = url.pathname.replace(PATH_SESSION, "").replace(/%[0-9a-f]{2}/gi, unescapeUnreserved);
  // The query's pieces as written (re-encoding them could change what a server reads), sorted by name.
  const kept = url.search
    .slice(1)
    .split("&")
    .filter((piece) => piece && !dropped(nameOf(piece)));
  kept.sort((a, b) => (nameOf(a) < nameOf(b) ? -1 : nameOf(a) > nameOf(b) ? 1 : 0));
  url.search = kept.join("&");
  return url.href;
}

/**
 * The shape of `url`'s page (its host and path with every run of digits as `N`, and the names of
 * its query parameters without their values): pages a site makes by counting (a calendar's next
 * month, page 2 of a list) share it.
 */
export function patternOf(url: string): string {
  const { host, pathname, searchParams } = new URL(url);
  const names = [...new Set(searchParams.keys())].sort();
  return `${host}${pathname.replace(/\d+/g, "N")}${names.length ? `?${names.join("&")}` : ""}`;
}

/** Why `url` is not queued for its shape alone, or null: too long, too many segments, or a segment run repeated. */
export function trapOf(url: string): string | null {
  if (url.length > MAX_URL_LENGTH) return `longer than ${MAX_URL_LENGTH} characters`;
  const segments = new URL(url).pathname.split("/").filter(Boolean);
  if (segments.length > MAX_SEGMENTS) return `more than ${MAX_SEGMENTS} path segments`;
  // A run of 1 to 4 segments that comes back REPEATS times in a row: /a/a/a, /x/y/x/y/x/y.
  for (let run = 1; run <= 4; run++)
    for (let start = 0; start + run * REPEATS <= segments.length; start++) {
      const first = segments.slice(start, start + run).join("/");
      let same = 1;
      while (same < REPEATS && segments.slice(start + run * same, start + run * (same + 1)).join("/") === first) same++;
      if (same === REPEATS) return "a path segment repeated";
    }
  return null;
}

/**
 * A glob on the whole URL as a matcher: `*` matches within a path segment (anything but `/`), `**`
 * across segments; every other character is itself.
 */
export function globMatcher(glob: string): (url: string) => boolean {
  const source = glob
    .split("**")
    .map((part) =>
      part
        .split("*")
        .map((literal) => literal.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
        .join("[^/]*"),
    )
    .join(".*");
  const pattern = new RegExp(`^${source}$`);
  return (url) => pattern.test(url);
}

/** What a crawl keeps to: the start's host (and its subdomains, when asked) and the include and exclude globs. */
export interface Scope {
  readonly start: string;
  readonly subdomains: boolean;
  readonly include: readonly string[];
  readonly exclude: readonly string[];
}

/** A host without a leading `www.`: example.com and www.example.com are one site. */
const siteOf = (host: string) => host.replace(/^www\./, "");

/**
 * Whether `url` (normalised) is in `scope`: on the start's host (www. or not), or one under it with
 * `subdomains`; matching an include glob when there are any, and no exclude glob (exclude wins).
 */
export function scopeTest(scope: Scope): (url: string) => boolean {
  // The host with its port: another port is another server, another site.
  const site = siteOf(new URL(scope.start).host);
  const include = scope.include.map(globMatcher);
  const exclude = scope.exclude.map(globMatcher);
  return (url) => {
    const host = siteOf(new URL(url).host);
    if (host !== site && !(scope.subdomains && host.endsWith(`.${site}`))) return false;
    if (include.length && !include.some((matches) => matches(url))) return false;
    return !exclude.some((matches) => matches(url));
  };
}
