import { readdirSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import path from "node:path";
import chromium from "@sparticuz/chromium";
import puppeteer, { type Browser, type BrowserContext, type Dialog, type Page } from "puppeteer-core";
import { config } from "../config.js";
import { aborted, orTimeout } from "../deadline.js";
import { AppError } from "../errors.js";
import { describeError, log } from "../log.js";
import { onceUntilFailure } from "../once.js";
import { fairSemaphore } from "../semaphore.js";
import { tenantNow } from "../tenant.js";
import { invalidUrl, proxyError, renderError } from "./errors.js";
import { type GuardSession, openGuardSession, openGuardSessions } from "./guard/network-guard.js";
import { isPacked, localLayer, unpackChromium, unpackedDir } from "./packaging/chromium-pack.js";
import { buildFonts, FONT_CACHE_DIR, linkFonts, writeFontconfig } from "./packaging/fonts.js";

// The only module that touches browsers. Two Chromium processes per process (per Lambda container),
// each launched lazily behind a lock and relaunched when it dies:
//  - the page browser renders customers' pages: every render gets a fresh incognito context (no
//    cookies, storage or cache shared between customers) with its own network guard, closed on every
//    exit path. It keeps SwiftShader so WebGL content (maps, 3D) renders, and composites on the CPU.
//  - the composer renders only our own mockup templates (data: URLs, no network): CPU raster with no
//    GPU emulation, measured twice as fast for large gradients, shadows and images, and its pages are reused.

/** What a render gets: its page, the guard its traffic goes through, and user agents to present. */
export interface PageSession {
  readonly page: Page;
  readonly guard: GuardSession;
  readonly userAgents: UserAgents;
}

/** The browser's user agent as a desktop and as a phone would send it (never "HeadlessChrome"). */
export interface UserAgents {
  readonly desktop: string;
  readonly mobile: string;
}

// @sparticuz/chromium's flags minus three: --single-process crashes createBrowserContext();
// --disable-web-security and --allow-running-insecure-content would let pages read across
// origins and load file: URLs.
const DROPPED_FLAGS = new Set(["--single-process", "--disable-web-security", "--allow-running-insecure-content"]);
// GPU emulation (SwiftShader), which the composer does without.
const GPU_FLAGS = new Set(["--use-gl=angle", "--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--ignore-gpu-blocklist", "--in-process-gpu"]);

const RASTER_THREADS = Math.min(4, availableParallelism());

const EXTRA_FLAGS = [
  // Nothing leaves except through a context's guard: names never resolve in the browser itself,
  // and the default proxy (the discard port) fails closed for anything outside a guarded context.
  "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
  "--proxy-server=http://127.0.0.1:9",
  "--proxy-bypass-list=<-loopback>",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-breakpad",
  "--disable-crash-reporter",
  "--disable-dev-shm-usage",
  "--hide-scrollbars",
  "--mute-audio",
  // UDP would bypass the guard proxy: no QUIC, and WebRTC only through the proxy (so, not at all).
  "--disable-quic",
  "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
  // window.open and target=_blank open nothing (headless shell's switch): no popup storms.
  "--block-new-web-contents",
  // A page's JavaScript heap is capped, so a memory bomb fails its own render, not the function.
  "--js-flags=--max-old-space-size=512",
  // Tiles are rastered on every core, not one: Chromium gives machines under 4 cores a single raster
  // thread, and raster is most of a 2x capture of a real page (docs/design.md).
  `--num-raster-threads=${RASTER_THREADS}`,
];

// The only environment Chromium gets: no AWS credentials, no secrets. (LD_LIBRARY_PATH and
// FONTCONFIG_PATH are what @sparticuz/chromium sets on Lambda for its libraries and fonts.)
const CHROMIUM_ENVIRONMENT = ["PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "TZ", "LD_LIBRARY_PATH", "FONTCONFIG_PATH", "FONTCONFIG_FILE"];

const PROFILE = /^shotline-chrome-(\d+)(?:-[a-z]+)?$/;

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
};

/** Removes browser profiles left in the temp dir by processes that died without cleaning up. */
function sweepStaleProfiles() {
  for (const name of readdirSync(tmpdir())) {
    const pid = Number(PROFILE.exec(name)?.[1]);
    if (Number.isInteger(pid) && pid !== process.pid && !alive(pid)) rmSync(path.join(tmpdir(), name), { recursive: true, force: true });
  }
}

/** The Chromium to start and the environment it needs besides CHROMIUM_ENVIRONMENT. */
interface ChromiumRuntime {
  readonly executablePath: string;
  readonly env: Readonly<Record<string, string>>;
}

/**
 * Makes Chromium runnable, once per process: the packed layer (lib/render/packaging/chromium-pack.ts)
 * is unpacked into the temp dir; on Lambda that started before this code loaded (the boot module),
 * elsewhere the installed @sparticuz/chromium is packed once into the temp dir first, so the same
 * unpacker runs everywhere, safely beside other processes. Fonts: a fonts.conf listing Open Sans and
 * our fonts (the fonts layer on Lambda, built into the temp dir elsewhere), so local output matches
 * Lambda's rather than the machine's fonts.
 */
/** Where our fonts are: the fonts layer on Lambda, built into the temp dir elsewhere. */
export const ourFontsDir = () => config.FONTS_DIR ?? path.join(tmpdir(), "shotline-fonts", "fonts");

async function prepareChromium(): Promise<ChromiumRuntime> {
  const fontsRoot = path.join(tmpdir(), "shotline-fonts");
  const ourFonts = ourFontsDir();
  if (!config.FONTS_DIR) await buildFonts(ourFonts);
  const configured = config.CHROMIUM_BIN_DIR;
  const layer = configured && isPacked(configured) ? configured : localLayer(configured);
  const unpacked = await unpackChromium(layer, unpackedDir(layer));
  // The fonts layer's index of these fonts (lib/render/packaging/fonts.ts); built locally, the index is kept in the temp dir.
  const fontDirs = [unpacked.fontsDir, ourFonts];
  const fontconfig = writeFontconfig(fontsRoot, linkFonts(fontsRoot, fontDirs).dir, config.FONTS_DIR && path.join(config.FONTS_DIR, FONT_CACHE_DIR));
  // Lambda's Amazon Linux 2023 lacks some of Chromium's libraries; the layer brings them.
  const libraries = config.AWS_EXECUTION_ENV ? [unpacked.libraryDir, process.env.LD_LIBRARY_PATH].filter(Boolean).join(":") : undefined;
  return { executablePath: unpacked.executablePath, env: { FONTCONFIG_PATH: fontconfig, ...(libraries ? { LD_LIBRARY_PATH: libraries } : {}) } };
}

/** prepareChromium(), shared by both browsers; tried again after a failure. */
const runnableChromium = onceUntilFailure(prepareChromium);

/** One lazily launched Chromium, relaunched behind a lock when it has died. */
class ManagedBrowser {
  private browser: Browser | null = null;
  private launching: Promise<Browser> | null = null;
  private readonly userDataDir: string;

  constructor(
    private readonly name: string,
    private readonly flags: (base: readonly string[]) => string[],
    private readonly onLaunch: (browser: Browser) => Promise<void> = async () => undefined,
  ) {
    this.userDataDir = path.join(tmpdir(), `shotline-chrome-${process.pid}-${name}`);
  }

  async get(): Promise<Browser> {
    if (this.browser?.connected) return this.browser;
    this.launching ??= this.launch()
      .then((b) => (this.browser = b))
      .finally(() => (this.launching = null));
    return this.launching;
  }

  private async launch(): Promise<Browser> {
    const started = Date.now();
    const { executablePath, env } = await runnableChromium();
    // A previous browser that crashed (ours, or another process's) may have left its profile
    // behind: never let /tmp fill up.
    rmSync(this.userDataDir, { recursive: true, force: true });
    sweepStaleProfiles();
    const launched = await puppeteer.launch({
      executablePath,
      headless: "shell",
      args: [...this.flags(chromium.args.filter((flag) => !DROPPED_FLAGS.has(flag))), ...EXTRA_FLAGS],
      userDataDir: this.userDataDir,
      // No first tab: every render opens its own page, and the about:blank tab's renderer process
      // cost ~100-150 ms of each launch here (one cold start's).
      ignoreDefaultArgs: ["about:blank"],
      waitForInitialPage: false,
      // A pipe, not a websocket: faster, and Chromium exits when this process dies, however it dies.
      pipe: true,
      // Our process decides when the browser closes (dev/stack.ts stops it on Ctrl-C).
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
      protocolTimeout: 60_000,
      // Headless shell saves no downloads today; say so rather than rely on a default.
      downloadBehavior: { policy: "deny" },
      env: {
        ...Object.fromEntries(CHROMIUM_ENVIRONMENT.flatMap((name) => (process.env[name] === undefined ? [] : [[name, process.env[name]]]))),
        ...env,
      },
    });
    await this.onLaunch(launched);
    launched.once("disconnected", () => {
      if (this.browser === launched) this.browser = null;
      log.warn("browser disconnected", { browser: this.name });
    });
    log.info("browser launched", { browser: this.name, ms: Date.now() - started, version: await launched.version() });
    return launched;
  }

  async close(): Promise<void> {
    const current = this.browser ?? (await this.launching?.catch(() => null)) ?? null;
    this.browser = null;
    await current?.close().catch(() => undefined);
    rmSync(this.userDataDir, { recursive: true, force: true });
  }

  /** Kills a stuck browser; the next `get()` launches a new one. */
  kill(reason: string): void {
    const stuck = this.browser;
    if (!stuck) return;
    this.browser = null;
    log.warn("browser killed", { browser: this.name, reason });
    stuck.process()?.kill("SIGKILL");
  }

  pid(): number | undefined {
    return this.browser?.process()?.pid;
  }

  /** Incognito contexts open (the default context not counted). */
  contexts(): number {
    return this.browser?.connected ? this.browser.browserContexts().length - 1 : 0;
  }
}

let userAgents: UserAgents | null = null;

// Layers are composited on the CPU: SwiftShader compositing a 2x capture is the slow part of a
// screenshot (measured: a 2560x1600 gradient 464 ms, 121 ms with CPU compositing; a flat page 96 vs
// 103 ms). WebGL still draws with SwiftShader and is read back (test/integration/render.test.ts).
const pages = new ManagedBrowser(
  "pages",
  (flags) => [...flags, "--disable-gpu-compositing"],
  async (browser) => {
    // Some sites turn away "HeadlessChrome"; present the browser as the Chrome it is.
    const desktop = (await browser.userAgent()).replace("HeadlessChrome/", "Chrome/");
    userAgents = {
      desktop,
      mobile: desktop.replace(/\([^)]*\)/, "(Linux; Android 14; Pixel 8)").replace(/ Safari\//, " Mobile Safari/"),
    };
  },
);

const composer = new ManagedBrowser("composer", (flags) => [...flags.filter((f) => !GPU_FLAGS.has(f)), "--disable-gpu", "--disable-webgl"]);

// Pages at once, shared between tenants (lib/tenant.ts): one tenant holds all but one of them at
// most, so another's render never waits behind a queue of one account's.
const renderSlot = fairSemaphore(config.RENDER_CONCURRENCY, Math.max(1, config.RENDER_CONCURRENCY - 1));

/** A fresh, never-used incognito context with its page and its own guard. */
interface FreshContext {
  readonly context: BrowserContext;
  readonly page: Page;
  readonly guard: GuardSession;
}

async function openFreshContext(): Promise<FreshContext> {
  const guard = await openGuardSession(config.privateHosts);
  try {
    const context = await (await pages.get()).createBrowserContext({
      proxyServer: guard.proxyServer,
      proxyBypassList: ["<-loopback>"],
      downloadBehavior: { policy: "deny" },
    });
    const page = await context.newPage();
    // alert, confirm, prompt and beforeunload would block the page until the deadline. (Popups
    // cannot open at all: --block-new-web-contents.)
    page.on("dialog", (dialog: Dialog) => void dialog.dismiss().catch(() => undefined));
    return { context, page, guard };
  } catch (error) {
    await guard.close();
    throw error;
  }
}

const disposals = new WeakMap<FreshContext, Promise<void>>();

/** Closes a context and its guard, once, whoever asks first (the render's end or its deadline); every caller waits for it. */
function disposeContext(fresh: FreshContext): Promise<void> {
  let disposal = disposals.get(fresh);
  if (!disposal) {
    disposal = fresh.context
      .close()
      .catch((error: unknown) => log.debug("context close failed", { error: describeError(error) }))
      .then(() => fresh.guard.close());
    disposals.set(fresh, disposal);
  }
  return disposal;
}

/** The failures a proxy that failed explains: the page could not load, or not in time. */
const PROXIED_FAILURES = new Set<string>(["INVALID_URL", "RENDER_TIMEOUT", "RENDER_ERROR"]);

/** A capture of a blank page takes milliseconds; this long means the browser is stuck. */
const PROBE_MS = 10_000;

/**
 * After a render that timed out: can the browser still capture a blank page? A page can wedge the
 * whole browser, not just its own renderer (a WebGL shader that runs for minutes holds the GPU
 * thread every capture needs). A stuck browser is killed, so renders in flight fail at once
 * (refunded) and the next one launches a fresh browser.
 */
async function killIfStuck(): Promise<void> {
  const probe = (async () => {
    const page = await (await pages.get()).newPage();
    try {
      await page.screenshot({ type: "jpeg", quality: 10 });
      return true;
    } finally {
      void page.close().catch(() => undefined);
    }
  })().catch(() => true); // a browser that died on its own relaunches anyway
  if (!(await orTimeout(probe, PROBE_MS, () => false))) pages.kill(`a blank page could not be captured within ${PROBE_MS} ms`);
}

// One context is prepared ahead, so a render does not wait ~60 ms for context, page and guard.
// It is still used once only, by one render: nothing is shared between customers.
let spare: Promise<FreshContext> | null = null;

function prepareSpare() {
  // Two renders starting together must not both prepare one: the second would replace (and leak) the first's.
  if (spare) return;
  const pending = openFreshContext();
  spare = pending;
  pending.catch(() => {
    if (spare === pending) spare = null;
  });
}

async function takeContext(): Promise<FreshContext> {
  const ready = spare;
  spare = null;
  const candidate = ready ? await ready.catch(() => null) : null;
  if (candidate && !candidate.page.isClosed() && candidate.context.browser().connected) return candidate;
  if (candidate) await disposeContext(candidate);
  return openFreshContext();
}

/**
 * Runs `fn` with a fresh incognito page whose traffic goes through its own network guard, and cleans
 * up whatever happens. When `signal` aborts (the request's deadline), the context is closed at once,
 * which fails whatever `fn` still awaits of the page, its browser slot is freed, and the call
 * rejects with the signal's reason.
 */
export async function withPage<T>(signal: AbortSignal, fn: (session: PageSession) => Promise<T>): Promise<T> {
  const release = await renderSlot(tenantNow(), signal);
  try {
    const fresh = await takeContext();
    prepareSpare();
    // A crashed renderer (out of memory, a Chromium bug) fails this render only, at once.
    const crash = new AbortController();
    fresh.page.once("error", (error: Error) => crash.abort(error));
    // The deadline, a crash, or the page passing one of its guard's limits ends the render at once.
    const ended = AbortSignal.any([signal, crash.signal, fresh.guard.tripped]);
    const abandon = () => void disposeContext(fresh);
    ended.addEventListener("abort", abandon, { once: true });
    try {
      ended.throwIfAborted();
      const work = fn({ page: fresh.page, guard: fresh.guard, userAgents: userAgents! });
      work.catch(() => undefined);
      return await Promise.race([
        work,
        aborted(signal),
        aborted(crash.signal).catch((reason: unknown) => Promise.reject(renderError(reason))),
        aborted(fresh.guard.tripped).catch((reason: unknown) => Promise.reject(invalidUrl(`the page ${String(reason)}`))),
      ]);
    } catch (error) {
      // A page that failed because the customer's proxy did is the proxy's failure (its own code, not charged).
      const failed = fresh.guard.proxyFailure();
      if (failed && !signal.aborted && (!(error instanceof AppError) || PROXIED_FAILURES.has(error.code))) throw proxyError(failed);
      if (signal.aborted || (error instanceof AppError && error.code === "RENDER_TIMEOUT")) await killIfStuck();
      throw error;
    } finally {
      ended.removeEventListener("abort", abandon);
      await disposeContext(fresh);
    }
  } finally {
    release();
  }
}

// Composer pages are reused: they only ever show our own templates. Not forever: a page's renderer
// keeps some memory of every capture it was handed (measured: +3.3 MB per mockup, 2.2 GB after 400),
// so a page is closed after this many uses.
const idleComposerPages: Page[] = [];
const COMPOSER_PAGE_USES = 5;
const composerUses = new WeakMap<Page, number>();
/** Composer pages handed out so far (tests see which mockups needed none). */
let composerPagesUsed = 0;

/** Runs `fn` with a page of the composer (our own HTML only, never a customer's page). */
export async function withComposerPage<T>(fn: (page: Page) => Promise<T>): Promise<T> {
  const browser = await composer.get();
  let page = idleComposerPages.pop();
  while (page && (page.isClosed() || page.browser() !== browser)) page = idleComposerPages.pop();
  page ??= await browser.newPage();
  composerPagesUsed++;
  let healthy = false;
  try {
    const result = await fn(page);
    healthy = true;
    return result;
  } finally {
    const uses = (composerUses.get(page) ?? 0) + 1;
    composerUses.set(page, uses);
    if (healthy && uses < COMPOSER_PAGE_USES && idleComposerPages.length < config.RENDER_CONCURRENCY) idleComposerPages.push(page);
    else await page.close().catch(() => undefined);
  }
}

/**
 * Runs `fn` with a new page of the composer browser, closed after it, or at once when `signal`
 * aborts (an animation's encoder: lib/render/animate/encoder.ts). Used once, by one render.
 */
export async function withEncoderPage<T>(signal: AbortSignal, fn: (page: Page) => Promise<T>): Promise<T> {
  signal.throwIfAborted();
  const page = await (await composer.get()).newPage();
  const close = () => void page.close().catch(() => undefined);
  signal.addEventListener("abort", close, { once: true });
  try {
    const work = fn(page);
    work.catch(() => undefined);
    return await Promise.race([work, aborted(signal)]);
  } finally {
    signal.removeEventListener("abort", close);
    close();
  }
}

/** What the renderer holds right now (and composer pages used so far); the local stack reports it so tests can see nothing leaks. */
export function renderStats() {
  return { contexts: pages.contexts(), guards: openGuardSessions(), composerPagesUsed };
}

/** Launches the browsers ahead of the first request (the local stack, benchmarks). */
export async function warmUp(): Promise<void> {
  await Promise.all([pages.get(), composer.get()]);
  prepareSpare();
}

/** Closes the browsers and removes their profiles (local stack shutdown, tests). */
export async function closeBrowser(): Promise<void> {
  idleComposerPages.length = 0;
  const ready = spare;
  spare = null;
  const unused = await ready?.catch(() => null);
  if (unused) await disposeContext(unused);
  await Promise.all([pages.close(), composer.close()]);
}

// Lambda's INIT runs before any request waits, with a boosted CPU: a rendering function (one with
// the Chromium layer) unpacks Chromium, launches it and prepares the first render's context there.
// A failure is logged, not thrown: the first request launches the browser as any later one would.
if (config.AWS_LAMBDA_FUNCTION_NAME && config.CHROMIUM_BIN_DIR) {
  await pages
    .get()
    .then(() => {
      prepareSpare();
      return spare;
    })
    .catch((error: unknown) => log.warn("browser warm-up at INIT failed", { error: describeError(error) }));
}
