import type { harFromMessages } from "chrome-har";
import type { CDPSession, Page } from "puppeteer-core";
import { orTimeout } from "../deadline.js";
import { guardFailure } from "./errors.js";
import type { GuardSession } from "./guard/network-guard.js";
import type { CaptureOptions, PageLogRequest } from "./options.js";

// What the page did while it loaded (docs/api.md, "What the page did"): a HAR of its requests, its
// console, and the requests that failed or were blocked. Recorded from the page's own DevTools
// session, opened before the first request; what the customer sent as secrets (cookies, headers,
// basic auth, a proxy's credentials) and the guard's own headers are redacted wherever they appear.

/** One console message, uncaught error or browser message, in the order the page made them. */
interface ConsoleEntry {
  /** `console`: the page's console API; `exception`: an uncaught error; `browser`: the browser's own (a failed load, a security warning). */
  readonly source: "console" | "exception" | "browser";
  /** log, info, warn, error, debug... for the console; error for an exception; the browser's level. */
  readonly type: string;
  readonly text: string;
  /** Where it was made, when known: a script's URL and 1-based line and column. */
  readonly url?: string;
  readonly line?: number;
  readonly column?: number;
}

/** Why a request failed or was not made. */
type FailureReason = "dns" | "refused" | "timeout" | "guard" | "blocked" | "http" | "aborted" | "pending" | "proxy" | "failed";

/** A request that failed, was blocked, answered an HTTP error, or was still loading at the capture. */
interface NetworkFailure {
  readonly url: string;
  readonly method: string;
  /** The browser's resource type: document, script, image, font... */
  readonly type: string;
  readonly reason: FailureReason;
  /** The HTTP status, for `http`. */
  readonly status?: number;
  /** What the browser or the guard said. */
  readonly detail: string;
}

/** What a capture recorded, as asked. */
export interface PageLogs {
  readonly har?: { log: { entries: unknown[] } & Record<string, unknown> };
  readonly console?: { readonly messages: ConsoleEntry[]; readonly dropped: number };
  readonly network?: { readonly failures: NetworkFailure[]; readonly dropped: number };
}

/** Console messages kept, and the characters kept of each. */
const MAX_CONSOLE = 1_000;
const MAX_TEXT = 2_000;
/** Network failures kept (the guard lets a render make at most 1,500 requests). */
const MAX_FAILURES = 2_000;
/** Protocol events kept for the HAR (a render's requests are bounded; `dataReceived` is counted once a request). */
const MAX_HAR_EVENTS = 30_000;
/** Response bodies in a HAR with harBodies: each at most, all together at most, and the time to read them. */
const MAX_BODY_BYTES = 1024 * 1024;
const MAX_BODIES_BYTES = 10 * 1024 * 1024;
const BODIES_MS = 3_000;

const REDACTED = "[redacted]";
/** Headers whose values are always redacted: credentials, and the guard's own (our edge). */
const SECRET_HEADERS = /^(cookie|set-cookie|authorization|proxy-authorization|x-shotline-.*)$/i;

const HAR_EVENTS = [
  "Page.frameStartedLoading",
  "Page.frameRequestedNavigation",
  "Page.navigatedWithinDocument",
  "Page.frameAttached",
  "Page.loadEventFired",
  "Page.domContentEventFired",
  "Network.requestWillBeSent",
  "Network.requestWillBeSentExtraInfo",
  "Network.requestServedFromCache",
  "Network.responseReceived",
  "Network.responseReceivedExtraInfo",
  "Network.dataReceived",
  "Network.loadingFinished",
  "Network.loadingFailed",
  "Network.resourceChangedPriority",
] as const;

/** A cookie or a header: a secret's value with the name it stands under. */
interface NamedValue {
  readonly name: string;
  readonly value: string;
}

/** What a request sent that is secret: every value (cookies', headers', basic auth's, a proxy's), and the cookies and headers by name. */
interface Secrets {
  readonly values: readonly string[];
  readonly cookies: readonly NamedValue[];
  readonly headers: readonly NamedValue[];
}

/** The secrets of a request's page controls (docs/api.md): cookies, extra headers, basic auth; `more` besides (a proxy's credentials). */
export function secretsOf(options: Pick<CaptureOptions, "cookies" | "headers" | "httpAuth">, more: readonly string[] = []): Secrets {
  const headers = Object.entries(options.headers).map(([name, value]) => ({ name, value }));
  const values = [...options.cookies.map((c) => c.value), ...headers.map((h) => h.value), ...more];
  if (options.httpAuth) {
    const { username, password } = options.httpAuth;
    values.push(username, password, Buffer.from(`${username}:${password}`).toString("base64"));
  }
  return { values, cookies: options.cookies.map(({ name, value }) => ({ name, value })), headers };
}

/** Takes secrets out of a log's strings: `text` for any string, `value` for the value of a name/value pair or a whole message. */
export interface Redactor {
  text(value: string): string;
  value(value: string): string;
  header(name: string, value: string): string;
}

/** The page's own cookies redacted at most (the first set); Chromium keeps up to 180 a domain. */
const MAX_PAGE_COOKIES = 200;

/** Secrets this short are also common words and fragments of a page ("ab", "42"): redacted only where they stand whole. */
const SHORT = 4;
const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * Redacts every secret the request carried (and the page's own cookies, `pageCookies`), whatever its
 * length. One of 4 characters or more goes wherever it appears, as sent and percent-encoded. A
 * shorter one cannot (blanking every "ab" of a page would leave nothing to read), so it goes where
 * it stands as a whole token: the whole value of a header, cookie, query or form pair, a whole
 * console message (the request's own secrets), a cookie's value after its name (`name=ab;` in a
 * Cookie line or `document.cookie`), a header's after its (`Name: ab` on a line of its own).
 */
export function redactor(secrets: Secrets, allPageCookies: readonly NamedValue[] = []): Redactor {
  const names = new Set(secrets.headers.map(({ name }) => name.toLowerCase()));
  // Each is a pass over every string of the logs: a hostile page sets thousands (across its frames),
  // so that the redaction, synchronous, would hold the process past its deadline. The request's own
  // secrets are always all of them.
  const pageCookies = allPageCookies.slice(0, MAX_PAGE_COOKIES);
  const cookies = [...secrets.cookies, ...pageCookies];
  const spelled = (values: readonly string[]) => [...new Set(values.flatMap((v) => [v, encodeURIComponent(v)]).filter(Boolean))];
  // Longest first, so a secret that holds another is redacted whole.
  const anywhere = spelled([...secrets.values, ...pageCookies.map((c) => c.value)])
    .filter((v) => v.length >= SHORT)
    .sort((a, b) => b.length - a.length);
  // The request's own, whole; a page's short cookie ("consent=1") only after its name: its "1" is everywhere else too.
  const whole = new Set(spelled(secrets.values));
  const inPlace: [RegExp, string][] = [
    ...cookies
      .filter((c) => c.value.length > 0 && c.value.length < SHORT)
      .map(({ name, value }): [RegExp, string] => [new RegExp(`(^|[\\s;,])(${escaped(name)})=${escaped(value)}(?=$|[\\s;,])`, "g"), `$1$2=${REDACTED}`]),
    ...secrets.headers
      .filter((h) => h.value.length > 0 && h.value.length < SHORT)
      .map(({ name, value }): [RegExp, string] => [new RegExp(`^(${escaped(name)}):([ \\t]*)${escaped(value)}[ \\t]*$`, "gim"), `$1:$2${REDACTED}`]),
  ];
  const text = (value: string) =>
    inPlace.reduce(
      (out, [pattern, replacement]) => out.replace(pattern, replacement),
      anywhere.reduce((out, secret) => (out.includes(secret) ? out.split(secret).join(REDACTED) : out), value),
    );
  const pairValue = (value: string) => (whole.has(value.trim()) ? REDACTED : text(value));
  return { text, value: pairValue, header: (name, value) => (SECRET_HEADERS.test(name) || names.has(name.toLowerCase()) ? REDACTED : pairValue(value)) };
}

/** Every string in `value` redacted, header lists and cookie lists by name, pairs' and messages' values whole; a new value, the input untouched. */
export function redactDeep(value: unknown, redact: Redactor): unknown {
  if (typeof value === "string") return redact.text(value);
  if (Array.isArray(value)) return value.map((item) => redactDeep(item, redact));
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if ((key === "headers" || key === "cookies") && Array.isArray(item)) {
      out[key] = item.map((pair: { name?: unknown; value?: unknown }) =>
        typeof pair?.name === "string" && typeof pair.value === "string"
          ? { ...pair, name: redact.text(pair.name), value: key === "cookies" ? REDACTED : redact.header(pair.name, pair.value) }
          : redactDeep(pair, redact),
      );
    } else if (typeof item === "string" && (key === "value" || key === "text")) {
      // A query or form pair's value (HAR), a console message's text: short secrets too, where they are the whole of it.
      out[key] = redact.value(item);
    } else {
      out[key] = redactDeep(item, redact);
    }
  }
  return out;
}

const cut = (text: string) => (text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text);

interface RemoteObject {
  type: string;
  value?: unknown;
  unserializableValue?: string;
  description?: string;
}
interface CallFrame {
  url: string;
  lineNumber: number;
  columnNumber: number;
}

/** A console argument as DevTools prints it: a primitive's value, an object's description. */
function argText(arg: RemoteObject): string {
  if (arg.type === "string") return String(arg.value);
  if (arg.unserializableValue !== undefined) return arg.unserializableValue;
  if (arg.value !== undefined && (arg.type === "number" || arg.type === "boolean")) return String(arg.value);
  if (arg.type === "undefined") return "undefined";
  if (arg.value === null) return "null";
  return arg.description ?? arg.type;
}

const located = (frame: CallFrame | undefined) => (frame?.url ? { url: frame.url, line: frame.lineNumber + 1, column: frame.columnNumber + 1 } : {});

/** The reason a failure of the guard's names (lib/render/guard/network-guard.ts) is. */
function guardReason(detail: string): FailureReason {
  if (detail.startsWith("refused ")) return "guard";
  if (detail.startsWith("could not resolve")) return "dns";
  if (detail.startsWith("the proxy")) return "proxy";
  if (/ECONNREFUSED/.test(detail)) return "refused";
  if (/ETIMEDOUT|timed out/i.test(detail)) return "timeout";
  return "failed";
}

/** The reason a Chromium net error is. */
function netReason(errorText: string): FailureReason {
  if (/ERR_NAME_NOT_RESOLVED|ERR_NAME_RESOLUTION_FAILED/.test(errorText)) return "dns";
  if (/ERR_CONNECTION_REFUSED/.test(errorText)) return "refused";
  if (/TIMED_OUT/.test(errorText)) return "timeout";
  if (/ERR_BLOCKED_BY/.test(errorText)) return "blocked";
  if (/ERR_ABORTED/.test(errorText)) return "aborted";
  return "failed";
}

/**
 * The HAR without the addresses the browser saw: it reaches every site through the render's guard
 * on loopback, so each entry's `serverIPAddress` and `connection` would name the guard, not the site.
 */
function withoutAddresses(har: ReturnType<typeof harFromMessages>) {
  for (const entry of har.log.entries as Record<string, unknown>[]) {
    delete entry.serverIPAddress;
    delete entry.connection;
  }
  return har;
}

/**
 * Entries of requests that never reached their site (blocked by a control, refused by the guard,
 * failed on the way) answered as not sent (status 0, as browsers export them), with why in the
 * entry's `comment`: the browser saw a stand-in (a blocked image's empty pixel) or our guard's own
 * answer, which a HAR viewer would otherwise draw as the site's.
 */
function markUnsent(har: ReturnType<typeof harFromMessages>, failures: readonly NetworkFailure[]) {
  const unsent = new Map(failures.filter((f) => f.reason !== "http" && f.reason !== "pending").map((f) => [f.url, f]));
  for (const entry of har.log.entries as { request: { url: string }; response: { status: number; statusText: string }; comment?: string }[]) {
    const failure = unsent.get(entry.request.url);
    if (!failure) continue;
    entry.response.status = 0;
    entry.response.statusText = "";
    entry.comment = `${failure.reason}: ${failure.detail}`;
  }
  return har;
}

/** A recording under way: `blocked` tells it of a request our controls did not let out; `finish` ends it with the logs asked. */
export interface PageRecorder {
  blocked(url: string, type: string, why: string): void;
  finish(): Promise<PageLogs>;
}

interface RequestInfo {
  url: string;
  method: string;
  type: string;
  done: boolean;
  /** Already listed as a failure (a 404 script is then also aborted: listed once). */
  failed?: boolean;
}

/** Starts recording what `page` does, as `asked`; call before it loads anything. */
export async function recordPage(page: Page, guard: GuardSession, asked: PageLogRequest, secrets: Secrets): Promise<PageRecorder> {
  const session: CDPSession = await page.createCDPSession();
  const requests = new Map<string, RequestInfo>();
  const messages: { method: string; params: unknown }[] = [];
  const received = new Map<string, { dataLength: number; encodedDataLength: number }>();
  const consoleEntries: ConsoleEntry[] = [];
  let consoleDropped = 0;
  const failures: NetworkFailure[] = [];
  let failuresDropped = 0;
  const blockedUrls = new Set<string>();

  const fail = (failure: NetworkFailure) => {
    if (failures.length < MAX_FAILURES) failures.push(failure);
    else failuresDropped++;
  };
  const say = (entry: ConsoleEntry) => {
    if (consoleEntries.length < MAX_CONSOLE) consoleEntries.push({ ...entry, text: cut(entry.text) });
    else consoleDropped++;
  };

  if (asked.har) {
    for (const method of HAR_EVENTS) {
      session.on(method, (params: unknown) => {
        if (method === "Network.dataReceived") {
          // One event a chunk: kept once a request, its lengths summed.
          const { requestId, dataLength, encodedDataLength } = params as { requestId: string; dataLength: number; encodedDataLength: number };
          const sum = received.get(requestId);
          if (sum) {
            sum.dataLength += dataLength;
            sum.encodedDataLength += encodedDataLength;
            return;
          }
          const first = { ...(params as object), dataLength, encodedDataLength };
          received.set(requestId, first);
          params = first;
        }
        if (messages.length < MAX_HAR_EVENTS) messages.push({ method, params });
      });
    }
  }
  session.on("Network.requestWillBeSent", (params) => {
    const known = requests.get(params.requestId);
    // A redirect reuses the request's id: the hop before it is done.
    if (known) known.done = true;
    requests.set(params.requestId, { url: params.request.url, method: params.request.method, type: (params.type ?? "Other").toLowerCase(), done: false });
  });
  session.on("Network.responseReceived", (params) => {
    const request = requests.get(params.requestId);
    const { status, url } = params.response;
    if (!request || status < 400 || blockedUrls.has(url)) return;
    // The guard answers a plain-HTTP request it refused or could not make with its own status.
    const guarded = Object.keys(params.response.headers).some((name) => name.toLowerCase() === "x-shotline-guard");
    const detail = guarded ? guardFailure(url, guard) : undefined;
    request.failed = true;
    if (detail) fail({ url, method: request.method, type: request.type, reason: guardReason(detail), detail });
    else
      fail({
        url,
        method: request.method,
        type: request.type,
        reason: "http",
        status,
        detail: `HTTP ${status}${params.response.statusText ? ` ${params.response.statusText}` : ""}`,
      });
  });
  session.on("Network.loadingFinished", (params) => {
    const request = requests.get(params.requestId);
    if (request) request.done = true;
  });
  session.on("Network.loadingFailed", (params) => {
    const request = requests.get(params.requestId);
    if (!request) return;
    request.done = true;
    if (request.failed || blockedUrls.has(request.url)) return;
    const detail = guardFailure(request.url, guard);
    const reason = params.blockedReason ? "blocked" : params.canceled ? "aborted" : detail ? guardReason(detail) : netReason(params.errorText);
    fail({ url: request.url, method: request.method, type: request.type, reason, detail: detail ?? params.blockedReason ?? params.errorText });
  });
  if (asked.console) {
    session.on("Runtime.consoleAPICalled", (params) => {
      say({ source: "console", type: params.type, text: params.args.map(argText).join(" "), ...located(params.stackTrace?.callFrames[0]) });
    });
    session.on("Runtime.exceptionThrown", ({ exceptionDetails: details }) => {
      const description = details.exception?.description?.split("\n")[0];
      say({
        source: "exception",
        type: "error",
        text: description ?? details.text,
        ...(details.url ? { url: details.url, line: details.lineNumber + 1, column: details.columnNumber + 1 } : located(details.stackTrace?.callFrames[0])),
      });
    });
    session.on("Log.entryAdded", ({ entry }) => {
      say({
        source: "browser",
        type: entry.level,
        text: entry.text,
        ...(entry.url ? { url: entry.url, ...(entry.lineNumber !== undefined ? { line: entry.lineNumber + 1 } : {}) } : {}),
      });
    });
  }
  await Promise.all([
    session.send("Network.enable"),
    asked.har ? session.send("Page.enable") : null,
    asked.console ? session.send("Runtime.enable") : null,
    asked.console ? session.send("Log.enable") : null,
  ]);

  /** Reads finished responses' bodies into their messages, within the caps. */
  async function readBodies() {
    let total = 0;
    const finished = new Set(messages.filter((m) => m.method === "Network.loadingFinished").map((m) => (m.params as { requestId: string }).requestId));
    const responses = messages.filter((m) => m.method === "Network.responseReceived" && finished.has((m.params as { requestId: string }).requestId));
    await orTimeout(
      (async () => {
        for (const message of responses) {
          const params = message.params as { requestId: string; response: { body?: string; encoding?: string } };
          if (total >= MAX_BODIES_BYTES) return;
          const read = await session.send("Network.getResponseBody", { requestId: params.requestId }).catch(() => null);
          if (!read) continue;
          const bytes = read.base64Encoded ? Math.floor((read.body.length * 3) / 4) : Buffer.byteLength(read.body);
          if (bytes > MAX_BODY_BYTES || total + bytes > MAX_BODIES_BYTES) continue;
          total += bytes;
          params.response.body = read.body;
          if (read.base64Encoded) params.response.encoding = "base64";
        }
      })(),
      BODIES_MS,
      () => undefined,
    );
  }

  return {
    blocked(url, type, why) {
      blockedUrls.add(url);
      fail({ url, method: "GET", type, reason: "blocked", detail: why });
    },
    async finish() {
      if (asked.har && asked.harBodies) await readBodies();
      for (const request of requests.values()) {
        // An event stream stays open by design: not a request the capture waited on.
        if (!request.done && !blockedUrls.has(request.url) && request.type !== "eventsource") {
          fail({ url: request.url, method: request.method, type: request.type, reason: "pending", detail: "still loading when the page was captured" });
        }
      }
      // The page's cookies too (those it set itself, or its servers did), wherever they appear.
      const { cookies } = await session.send("Network.getCookies").catch(() => ({ cookies: [] }));
      const redact = redactor(secrets, cookies);
      await session.detach().catch(() => undefined);
      const har = asked.har
        ? // chrome-har and its cookie parser (~160 KB minified) load only for a render that asks for a HAR.
          (redactDeep(
            markUnsent(withoutAddresses((await import("chrome-har")).harFromMessages(messages, { includeTextFromResponseBody: asked.harBodies })), failures),
            redact,
          ) as PageLogs["har"])
        : undefined;
      return {
        ...(har ? { har } : {}),
        ...(asked.console ? { console: { messages: redactDeep(consoleEntries, redact) as ConsoleEntry[], dropped: consoleDropped } } : {}),
        ...(asked.network ? { network: { failures: redactDeep(failures, redact) as NetworkFailure[], dropped: failuresDropped } } : {}),
      };
    },
  };
}
