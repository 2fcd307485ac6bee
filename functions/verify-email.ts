import { verifyEmailQuery } from "../lib/api/schemas.js";
import { verifyEmail } from "../lib/billing/accounts.js";
import { formatUsd, SIGNUP_BONUS_MICRO_USD } from "../lib/billing/money.js";
import { inlineHash, pageHeaders } from "../lib/http/headers.js";
import { text } from "../lib/http/responses.js";
import { withHttp } from "../lib/http/with-http.js";
import { PRICES } from "../lib/routes.js";

// GET /api/v1/verify-email?token=...: the link a signup's verification mail carries (docs/api.md,
// "Keys and accounts"). Followed once within its 7 days, it verifies the account's address and
// credits the signup bonus, unless the address has had it. It answers a page for the person who
// clicked, not JSON.

const STYLE = "body{font:16px/1.55 system-ui,sans-serif;color:#0f172a;max-width:560px;margin:64px auto;padding:0 24px}a{color:#4f46e5}";
const HEADERS = pageHeaders([`style-src ${inlineHash(STYLE)}`], "no-store");

const page = (status: number, title: string, message: string) =>
  text(
    `<!doctype html><html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${title} · Shotline</title><style>${STYLE}</style><h1>${title}</h1><p>${message}</p><p><a href="/dashboard">Open the dashboard</a></p></html>`,
    "text/html; charset=utf-8",
    HEADERS,
    status,
  );

const screenshots = SIGNUP_BONUS_MICRO_USD / PRICES.screenshot;

export const handler = withHttp({ route: "verify-email", schema: verifyEmailQuery }, async ({ body, requestId }) => {
  switch (await verifyEmail(body.token, requestId)) {
    case "credited":
      return page(200, "Address verified", `Your signup bonus, ${screenshots} screenshots (${formatUsd(SIGNUP_BONUS_MICRO_USD)}), is on your balance.`);
    case "verified":
      return page(200, "Address verified", "This address has already received its signup bonus, so this account starts without one.");
    case "invalid":
      return page(
        404,
        "This link does not work",
        "It has been used already, or it is more than 7 days old. An account's key works without it; sign up again for a new link.",
      );
  }
});
