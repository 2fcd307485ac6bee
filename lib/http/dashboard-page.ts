import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { MAX_TOPUP_CENTS, MIN_TOPUP_CENTS } from "../api/schemas.js";
import { SIGNUP_BONUS_MICRO_USD } from "../billing/money.js";
import { config } from "../config.js";
import { PRICES } from "../routes.js";
import { inlineHash, pageHeaders } from "./headers.js";

// The dashboard is one HTML document with its stylesheet and script inlined (dashboard/ holds the
// sources), assembled once per container. The Content-Security-Policy allows exactly those two
// inline blocks (by hash) and requests to this origin only; images also from the bucket's presigned
// links (a monitor's thumbnail).

/** Where presigned links of the bucket point: the local S3 under npm run dev, S3's own hosts on AWS. */
const storageOrigin = () => (config.S3_ENDPOINT ? new URL(config.S3_ENDPOINT).origin : "https://*.amazonaws.com");

let page: { html: string; headers: Record<string, string> } | undefined;

/** The dashboard's HTML and its response headers. */
export function dashboardPage(): { html: string; headers: Record<string, string> } {
  if (page) return page;
  const dir = config.DASHBOARD_DIR ?? path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../dashboard");
  const read = (file: string) => readFileSync(path.join(dir, file), "utf8");
  const style = read("dashboard.css");
  const script = read("dashboard.js");
  // Prices and limits from the one place they are written, as data (not script: the CSP allows only the script above).
  const pricing = {
    screenshotMicroUsd: PRICES.screenshot,
    mockupMicroUsd: PRICES.mockup,
    contentMicroUsd: PRICES.content,
    animateMicroUsd: PRICES.animate,
    signupBonusMicroUsd: SIGNUP_BONUS_MICRO_USD,
    minTopupCents: MIN_TOPUP_CENTS,
    maxTopupCents: MAX_TOPUP_CENTS,
  };
  const html = read("index.html")
    .replace("/* STYLE */", () => style)
    .replace(`"PRICING"`, () => JSON.stringify(pricing))
    .replace("/* SCRIPT */", () => script);
  page = {
    html,
    headers: pageHeaders(
      [`script-src ${inlineHash(script)}`, `style-src ${inlineHash(style)}`, `img-src 'self' data: ${storageOrigin()}`, "connect-src 'self'"],
      "no-cache",
    ),
  };
  return page;
}
