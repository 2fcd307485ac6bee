import chromium from "@sparticuz/chromium";
import { readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { config } from "../config.js";
import { describeError, log } from "../log.js";
import { buildFonts, writeFontconfig } from "./fonts.js";
import { openGuardSession, type GuardSession } from "./network-guard.js";

// The only module that touches the browser. One Chromium per process (per Lambda container),
// launched lazily behind a lock and relaunched when it dies; every render gets a fresh incognito
// context (no cookies, storage or cache shared between customers) with its own network guard,
// closed on every exit path.

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
];

const PROFILE_PREFIX = "shotline-chrome-";
const userDataDir = path.join(tmpdir(), `${PROFILE_PREFIX}${process.pid}`);

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
    const pid = name.startsWith(PROFILE_PREFIX) ? Number(name.slice(PROFILE_PREFIX.length)) : NaN;
    if (Number.isInteger(pid) && pid !== process.pid && !alive(pid)) rmSync(path.join(tmpdir(), name), { recursive: true, force: true });
  }
}

let browser: Browser | null = null;
let userAgents: UserAgents | null = null;
let launching: Promise<Browser> | null = null;

/** FONTCONFIG_PATH for Chromium: Lambda uses @sparticuz/chromium's (it lists /opt/fonts); elsewhere our own. */
function fontconfigPath(): string | undefined {
  if (config.FONTS_DIR) return undefined;
  const root = path.join(tmpdir(), "shotline-fonts");
  buildFonts(path.join(root, "fonts"));
  // /tmp/fonts: Open Sans, extracted by chromium.executablePath() as on Lambda.
  return writeFontconfig(root, [path.join(tmpdir(), "fonts"), path.join(root, "fonts")]);
}

async function launch(): Promise<Browser> {
  const started = Date.now();
  const executablePath = await chromium.executablePath(config.CHROMIUM_BIN_DIR);
  // A previous browser that crashed (ours, or another process's) may have left its profile behind:
  // never let /tmp fill up.
  rmSync(userDataDir, { recursive: true, force: true });
  sweepStaleProfiles();
  const fontconfig = fontconfigPath();
  const launched = await puppeteer.launch({
    executablePath,
    headless: "shell",
    args: [...chromium.args.filter((flag) => !DROPPED_FLAGS.has(flag)), ...EXTRA_FLAGS],
    userDataDir,
    // A pipe, not a websocket: faster, and Chromium exits when this process dies, however it dies.
    pipe: true,
    // Our process decides when the browser closes (lib/local stops it on Ctrl-C).
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
    protocolTimeout: 60_000,
    env: { ...process.env, ...(fontconfig ? { FONTCONFIG_PATH: fontconfig } : {}) },
  });
  // Some sites turn away "HeadlessChrome"; present the browser as the Chrome it is.
  const desktop = (await launched.userAgent()).replace("HeadlessChrome/", "Chrome/");
  userAgents = {
    desktop,
    mobile: desktop.replace(/\([^)]*\)/, "(Linux; Android 14; Pixel 8)").replace(/ Safari\//, " Mobile Safari/"),
  };
  launched.once("disconnected", () => {
    if (browser === launched) browser = null;
    log.warn("browser disconnected");
  });
  log.info("browser launched", { ms: Date.now() - started, version: await launched.version() });
  return launched;
}

/** The running browser, launched (once, behind a lock) when there is none or it died. */
async function getBrowser(): Promise<Browser> {
  if (browser?.connected) return browser;
  launching ??= launch()
    .then((b) => (browser = b))
    .finally(() => (launching = null));
  return launching;
}

// A small semaphore: renders beyond RENDER_CONCURRENCY wait for a slot instead of thrashing the CPU.
let active = 0;
const waiting: (() => void)[] = [];
async function acquire(): Promise<() => void> {
  if (active >= config.RENDER_CONCURRENCY) await new Promise<void>((resolve) => waiting.push(resolve));
  active++;
  return () => {
    active--;
    waiting.shift()?.();
  };
}

/** Runs `fn` with a fresh incognito page whose traffic goes through its own network guard; cleans up whatever happens. */
export async function withPage<T>(fn: (session: PageSession) => Promise<T>): Promise<T> {
  const release = await acquire();
  const guard = await openGuardSession(config.allowedPrivateHosts);
  try {
    const context = await (await getBrowser()).createBrowserContext({
      proxyServer: guard.proxyServer,
      proxyBypassList: ["<-loopback>"],
    });
    try {
      const page = await context.newPage();
      return await fn({ page, guard, userAgents: userAgents! });
    } finally {
      await context.close().catch((error: unknown) => log.debug("context close failed", { error: describeError(error) }));
    }
  } finally {
    await guard.close();
    release();
  }
}

/** Launches the browser ahead of the first request (the local stack, benchmarks). */
export async function warmUp(): Promise<void> {
  await getBrowser();
}

/** Closes the browser and removes its profile (local stack shutdown, tests). */
export async function closeBrowser(): Promise<void> {
  const current = browser ?? (await launching?.catch(() => null)) ?? null;
  browser = null;
  await current?.close().catch(() => undefined);
  rmSync(userDataDir, { recursive: true, force: true });
}

/** The browser's process id, for tests that crash it on purpose. */
export const browserPid = (): number | undefined => browser?.process()?.pid;
