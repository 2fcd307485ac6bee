import { readFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import type { Page } from "puppeteer-core";
import { config } from "../config.js";
import { log } from "../log.js";
import { COPIED_FILES } from "../packaging.js";

// Cookie-banner dismissal: DuckDuckGo's autoconsent (hundreds of CMP rules shipped inside the npm
// package, nothing fetched) rejects consent the way a person would click. Its opt-out can report
// success while the banner is still on screen, so afterwards we look, and hide what is still there.

interface AutoconsentAssets {
  script: string;
  rules: unknown;
}

let assets: AutoconsentAssets | undefined;

/** The content script and the compact opt-out rules: on Lambda from AUTOCONSENT_DIR (copied next to the handler), else from node_modules. */
function loadAssets(): AutoconsentAssets {
  if (!assets) {
    const [script, rules] = COPIED_FILES.autoconsent.map(({ from, to }) =>
      readFileSync(
        config.AUTOCONSENT_DIR ? path.join(config.AUTOCONSENT_DIR, path.basename(to)) : fileURLToPath(new URL(`../../${from}`, import.meta.url)),
        "utf8",
      ),
    ) as [string, string];
    assets = { script, rules: { autoconsent: [], compact: JSON.parse(rules) } };
  }
  return assets;
}

const AUTOCONSENT_CONFIG = {
  enabled: true,
  autoAction: "optOut",
  disabledCmps: [],
  enablePrehide: true,
  enableCosmeticRules: true,
  enableGeneratedRules: true,
  enableHeuristicDetection: true,
  detectRetries: 10,
  isMainWorld: false,
  prehideTimeout: 2000,
  logs: { lifecycle: false, rulesteps: false, detectionsteps: false, evals: false, errors: false, messages: false, waits: false },
};

/** Messages answered per page, and rule sets sent (one per frame that runs autoconsent). */
const MAX_CONSENT_MESSAGES = 500;
const MAX_CONSENT_INITS = 20;

type Message = { type?: string; id?: string; code?: string; cmp?: string; result?: boolean };

/** What autoconsent reported for one page. */
export interface ConsentState {
  cmp?: string;
  popupFound: boolean;
  done: boolean;
  optOut?: boolean;
}

const reply = (page: Page, message: unknown) =>
  page.evaluate(`window.autoconsentReceiveMessage && window.autoconsentReceiveMessage(${JSON.stringify(message)})`).catch(() => undefined);

/** Installs autoconsent in `page` before navigation; returns its live state. */
export async function prepareCookieBanners(page: Page): Promise<ConsentState> {
  const { script, rules } = loadAssets();
  const state: ConsentState = { popupFound: false, done: false };
  // The binding is callable by the page's own scripts too: a hostile page could flood it (each
  // init answers with ~257 KB of rules). Messages past these budgets are ignored.
  let messages = 0;
  let inits = 0;
  await page.exposeFunction("autoconsentSendMessage", async (message: Message) => {
    if (!message || typeof message !== "object" || ++messages > MAX_CONSENT_MESSAGES) return;
    switch (message.type) {
      case "init":
        if (++inits > MAX_CONSENT_INITS) return;
        return reply(page, { type: "initResp", config: AUTOCONSENT_CONFIG, rules });
      case "eval": {
        const result = await page.evaluate(String(message.code)).catch(() => false);
        return reply(page, { type: "evalResp", id: message.id, result });
      }
      case "cmpDetected":
        state.cmp = message.cmp;
        return;
      case "popupFound":
        state.popupFound = true;
        return;
      case "optOutResult":
        state.optOut = message.result;
        return;
      case "autoconsentDone":
        state.done = true;
        return;
    }
  });
  await page.evaluateOnNewDocument(script);
  return state;
}

// How long to give autoconsent after load: a CMP usually shows up within a second; an opt-out
// with a settings dialog takes a few.
const DETECT_MS = 1_000;
const OPT_OUT_MS = 6_000;

// Hides what still looks like a consent banner: fixed or sticky boxes that talk about cookies or
// consent and offer a button to accept/reject, known CMP containers, and the backdrop they leave;
// then gives the page its scrolling back. Returns how many elements it hid.
const HIDE_REMAINING_BANNERS = `(() => {
  const words = /cookie|consent|gdpr|datenschutz|privacy|tracking|personali[sz]/i;
  const buttons = /accept|agree|allow|reject|decline|refuse|got it|ok\\b|akzeptieren|zustimmen|ablehnen|accepter|refuser|aceptar|rechazar/i;
  const known = "#onetrust-consent-sdk,#CybotCookiebotDialog,#usercentrics-root,#qc-cmp2-container,.fc-consent-root,#didomi-host,.cc-window,#cookie-law-info-bar,#cmpbox,#sp_message_container_";
  const visible = (el) => { const s = getComputedStyle(el); const r = el.getBoundingClientRect(); return s.display !== "none" && s.visibility !== "hidden" && Number(s.opacity) > 0 && r.width * r.height > 1500; };
  const hide = (el) => { el.style.setProperty("display", "none", "important"); };
  let hidden = 0;
  for (const el of document.querySelectorAll(known)) if (visible(el)) { hide(el); hidden++; }
  for (const el of document.querySelectorAll("body *")) {
    if (el.closest("header,nav")) continue;
    const s = getComputedStyle(el);
    if (s.position !== "fixed" && s.position !== "sticky") continue;
    if (!visible(el)) continue;
    const text = el.innerText || "";
    if (!words.test(text)) continue;
    const clickable = Array.from(el.querySelectorAll("button,a,[role=button],input[type=button],input[type=submit]"));
    if (!clickable.some((b) => buttons.test(b.innerText || b.value || ""))) continue;
    hide(el); hidden++;
  }
  if (hidden > 0) {
    for (const el of document.querySelectorAll("body *")) {
      const s = getComputedStyle(el); const r = el.getBoundingClientRect();
      const coversViewport = s.position === "fixed" && r.width >= innerWidth * 0.9 && r.height >= innerHeight * 0.9;
      if (coversViewport && visible(el) && !(el.innerText || "").trim()) hide(el);
    }
    for (const el of [document.documentElement, document.body]) if (el && getComputedStyle(el).overflow === "hidden") el.style.setProperty("overflow", "visible", "important");
  }
  return hidden;
})()`;

/** After load: lets autoconsent finish (bounded by `budgetMs`), then hides any banner still visible. */
export async function dismissCookieBanners(page: Page, state: ConsentState, budgetMs: number): Promise<void> {
  const started = Date.now();
  const elapsed = () => Date.now() - started;
  while (elapsed() < budgetMs) {
    if (state.done || state.optOut !== undefined) break;
    if (!state.cmp && !state.popupFound && elapsed() > DETECT_MS) break;
    if (elapsed() > OPT_OUT_MS) break;
    await sleep(50);
  }
  // Give the page a frame to react to the clicks before looking.
  await sleep(100);
  const hidden = (await page.evaluate(HIDE_REMAINING_BANNERS).catch(() => 0)) as number;
  log.debug("cookie banners", { cmp: state.cmp, optOut: state.optOut, hiddenAfter: hidden, ms: elapsed() });
}
