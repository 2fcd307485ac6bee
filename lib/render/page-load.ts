import { type HTTPResponse, type Page, TimeoutError } from "puppeteer-core";
import { config } from "../config.js";
import { type Deadline, orTimeout, pageLoadLimit } from "../deadline.js";
import { AppError } from "../errors.js";
import { REVEAL } from "./anti-flicker.js";
import { type PageSession, withPage } from "./browser.js";
import { guardFailure, invalidUrl, renderTimeout, translateNavigationError, translateRenderError } from "./errors.js";
import type { RenderSource, WaitUntil } from "./options.js";

// Render's page-load API: a fresh page, prepared, loaded to its `load` event within the page-load
// limit. Captures and metadata's browser fallback both load pages through it.

// Time kept back from the request deadline for what follows the load: the capture and encoding.
const CAPTURE_RESERVE_MS = 3_000;

// What puppeteer says when the page navigated away under an evaluation or a capture.
const NAVIGATED =
  /Execution context was destroyed|Cannot find context with specified id|frame got detached|detached frame|Inspected target navigated or closed|Not attached to an active page/i;
const KEPT_NAVIGATING = "it kept navigating to other pages (a script or meta-refresh redirect loop)";

/**
 * Why a page is captured as it stood rather than loaded: its `load` event never came within the
 * page-load limit, but its document had painted content (docs/api.md, "What a render does").
 */
export type Incomplete = "load-timeout";

/**
 * Without a `waitUntil` of the caller's, `load` is waited for until this long before the page-load
 * limit (or half of a shorter limit): a page whose load never comes then still has the time to settle
 * and be captured, which a busy machine needs for a heavy page.
 */
const INCOMPLETE_RESERVE_MS = 5_000;

/** Time to ask a page whose load timed out whether it painted (a page whose scripts never yield does not answer). */
const PAINTED_CHECK_MS = 1_000;

/**
 * What counts as content: the browser's own first contentful paint in the main frame's document
 * (text, an image, a non-blank canvas or SVG drawn). A document that never committed, or that
 * drew nothing (a blank page, or one an anti-flicker snippet still hides), has none.
 */
const PAINTED = `performance.getEntriesByName("first-contentful-paint").length > 0`;

/** Resolves once the page's first contentful paint is recorded, or 600 ms have passed (frames are drawn and timed asynchronously). */
const AFTER_A_FRAME = `new Promise((resolve) => { const until = performance.now() + 600;
  const check = () => (${PAINTED} || performance.now() > until ? resolve() : setTimeout(check, 16)); check(); })`;

/** A page that reached its `load` event (or the limit, with content), with what the steps after loading need. */
export interface LoadedPage extends PageSession {
  /** Set when the page is captured as it stood at the page-load limit. */
  readonly incomplete: Incomplete | null;
  /** ms left of the page-load limit (may be negative once it has run out). */
  remaining(): number;
  /** The page-load limit in whole seconds, for messages. */
  readonly loadSeconds: number;
  /** The last main-frame document requested: where a redirect chain ended. */
  lastDocument(): string | undefined;
  /** Evaluates `script` (a string: functions would carry names a bundler injects) in the page, as `settled` runs work. */
  evaluate<T>(script: string): Promise<T>;
  /**
   * Runs `work` on the page within the page-load limit plus the capture's reserve and `extraMs`
   * (our own work that grows with the output), never past the deadline (a page whose
   * scripts never yield, or that wedges the GPU, answers nothing); if the page navigated by itself
   * under it (script or meta-refresh redirects), waits for the new document and runs it again, twice
   * at most: a page that keeps navigating is refused.
   */
  settled<T>(work: () => Promise<T>, extraMs?: number): Promise<T>;
}

/**
 * The time a page may take to load, counted from `slotAt` (when its render got a browser slot:
 * queueing behind other renders is not the page's time): the page-load limit, within the request's
 * deadline less what the capture and the response need.
 */
const pageLoadBudget = (deadline: Deadline, slotAt: number) =>
  Math.min(pageLoadLimit(deadline, config.PAGE_LOAD_TIMEOUT_MS), deadline.at - CAPTURE_RESERVE_MS - slotAt);

/**
 * Loads the source to `waitUntil` within `budgetMs`; a navigation failure or an HTTP error status
 * becomes our error. Without a `waitUntil` of the caller's, a page whose `load` has not come by
 * INCOMPLETE_RESERVE_MS before the limit (or half of a shorter one) but that painted content is
 * stopped where it stands and answered as incomplete; one that has not painted is waited for to
 * the limit, and taken then if it painted meanwhile.
 */
async function navigate(
  page: Page,
  guard: PageSession["guard"],
  source: RenderSource,
  budgetMs: number,
  loadSeconds: number,
  waitUntil: WaitUntil | undefined,
): Promise<{ lastDocument: () => string | undefined; navigations: () => number; incomplete: Incomplete | null }> {
  // "networkidle": at most 2 connections for 500 ms, so a page that holds a socket open still loads.
  const event = waitUntil === "networkidle" ? "networkidle2" : (waitUntil ?? "load");
  let documentUrl: string | undefined = source.kind === "url" ? source.url : undefined;
  let documentStatus = 0;
  const lastDocument = () => documentUrl;
  // Documents the main frame was sent (not a redirect's hop, not a script's pushState, which fetch
  // nothing): a failure while another arrived is a navigation's race, whatever words the browser
  // found for it.
  let committed = 0;
  const navigations = () => committed;
  page.on("request", (request) => {
    if (request.isNavigationRequest() && request.frame() === page.mainFrame()) documentUrl = request.url();
  });
  page.on("response", (answer) => {
    if (!answer.request().isNavigationRequest() || answer.frame() !== page.mainFrame()) return;
    documentStatus = answer.status();
    if (documentStatus < 300 || documentStatus >= 400) committed++;
  });
  // An anti-flicker snippet still hiding the page is ended first, and the page given a frame to paint.
  // Once it painted it stays painted: the answer is kept, not asked for again.
  let hasPainted = false;
  const painted = async () =>
    (hasPainted ||= await orTimeout(page.evaluate(`${REVEAL}, ${AFTER_A_FRAME}.then(() => ${PAINTED})`).then(Boolean), PAINTED_CHECK_MS, () => false).catch(
      () => false,
    ));
  let response: HTTPResponse | null = null;
  try {
    const loading: Promise<HTTPResponse | null> =
      source.kind === "url"
        ? page.goto(source.url, { waitUntil: event, timeout: budgetMs })
        : page
            .setContent(source.html, { waitUntil: event === "networkidle2" ? "load" : event, timeout: budgetMs })
            .then(() => (event === "networkidle2" ? page.waitForNetworkIdle({ idleTime: 500, concurrency: 2, timeout: budgetMs }) : undefined))
            .then(() => null);
    // setContent writes the HTML with an evaluation that a script looping before `load` never lets
    // return, and puppeteer's timeout covers only the wait for `load`: the budget bounds both.
    const waitFor = (ms: number) =>
      orTimeout(loading, ms, (): never => {
        throw new TimeoutError(`Navigation timeout of ${budgetMs} ms exceeded`);
      });
    const firstWaitMs = waitUntil === undefined ? Math.max(budgetMs / 2, budgetMs - INCOMPLETE_RESERVE_MS) : budgetMs;
    response = await waitFor(firstWaitMs).catch(async (error: unknown) => {
      if (!(error instanceof TimeoutError) || firstWaitMs === budgetMs || (await painted())) throw error;
      return waitFor(budgetMs - firstWaitMs);
    });
  } catch (error) {
    // A script or meta-refresh loop can fail the first load with any of the browser's words for a frame that moved on.
    if (!(error instanceof Error && /net::ERR_|timeout/i.test(error.message)) && !(error instanceof TimeoutError) && committed > 1)
      throw invalidUrl(KEPT_NAVIGATING, error);
    if (!(error instanceof TimeoutError) || waitUntil !== undefined || documentStatus >= 400 || !(await painted()))
      throw translateNavigationError(error, documentUrl, guard, loadSeconds);
    // What hangs (a third-party script, a frame) is stopped: the page stands as a visitor sees it.
    await orTimeout(page.evaluate("window.stop()"), PAINTED_CHECK_MS, () => undefined).catch(() => undefined);
    return { lastDocument, navigations, incomplete: "load-timeout" };
  }
  if (response && response.status() >= 400) {
    const refused = guardFailure(response.url(), guard);
    throw invalidUrl(refused ?? `${response.url()} answered HTTP ${response.status()}`);
  }
  return { lastDocument, navigations, incomplete: null };
}

/**
 * Runs `prepare` on a fresh page (viewport, user agent, what must be in place before the first
 * request), loads `source` to `waitUntil` (its `load` event by default, or the limit when it painted) within the page-load limit,
 * then runs `fn` with the loaded page. The page
 * is closed whatever happens, and at once when the deadline's signal fires. Failures that are not
 * already ours become RENDER_ERROR.
 */
export function withLoadedPage<P, T>(
  source: RenderSource,
  deadline: Deadline,
  prepare: (session: PageSession) => Promise<P>,
  fn: (loaded: LoadedPage, prepared: P) => Promise<T>,
  waitUntil?: WaitUntil,
): Promise<T> {
  return withPage(deadline.signal, async (session) => {
    const slotAt = Date.now();
    const budgetMs = pageLoadBudget(deadline, slotAt);
    if (budgetMs <= 0) throw renderTimeout("There was no time left to load the page.");
    const loadSeconds = Math.round(budgetMs / 1000);
    const remaining = () => slotAt + budgetMs - Date.now();
    const prepared = await prepare(session);
    const { lastDocument, navigations, incomplete } = await navigate(session.page, session.guard, source, budgetMs, loadSeconds, waitUntil);
    const { page } = session;
    // A page whose scripts never yield (an endless loop after load) never answers an evaluation:
    // each may run until the page-load limit plus the capture's reserve, then the render times out.
    const bounded = <R>(work: () => Promise<R>, extraMs: number): Promise<R> =>
      orTimeout(work(), Math.min(Math.max(0, remaining()) + CAPTURE_RESERVE_MS + extraMs, deadline.at - Date.now()), (): never => {
        throw renderTimeout(`The page stopped responding: it kept the browser busy past ${loadSeconds} s.`);
      });
    const settled = async <R>(work: () => Promise<R>, extraMs = 0): Promise<R> => {
      for (let attempt = 0; ; attempt++) {
        const before = navigations();
        try {
          return await bounded(work, extraMs);
        } catch (error) {
          const moved = !(error instanceof AppError) && navigations() !== before;
          if (!moved && !NAVIGATED.test(String(error) + String((error as { cause?: unknown }).cause ?? ""))) throw error;
          if (attempt >= 2) throw invalidUrl(KEPT_NAVIGATING, error);
          await page.waitForNavigation({ waitUntil: "load", timeout: Math.max(1, remaining()) }).catch(() => undefined);
        }
      }
    };
    const evaluate = <R>(script: string) => settled(() => page.evaluate(script) as Promise<R>);
    return fn({ ...session, incomplete, remaining, loadSeconds, lastDocument, evaluate, settled }, prepared);
  }).catch((error: unknown) => {
    throw translateRenderError(error);
  });
}
