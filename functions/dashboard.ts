import { dashboardPage } from "../lib/http/dashboard-page.js";
import { text } from "../lib/http/responses.js";
import { withHttp } from "../lib/http/with-http.js";

// GET /dashboard: the customer's page (sign up or in, balance, usage, auto-topup, USDC top-up).
// It talks to the API from the browser; this function only serves the document.
export const handler = withHttp({ route: "dashboard" }, async () => {
  const { html, headers } = dashboardPage();
  return text(html, "text/html; charset=utf-8", headers);
});
