// biome-ignore lint/suspicious/noRedundantUseStrict: a classic inline script, not a module (the page inlines it).
"use strict";
// The Shotline dashboard: plain browser JavaScript against this origin's API. The API key lives in
// this tab's sessionStorage only and travels in the Authorization header, never in a URL.
(() => {
  const API = `${location.origin}/api/v1`;
  const KEY_STORAGE = "shotline.apiKey";
  const $ = (id) => document.getElementById(id);
  // Prices and top-up limits, written into the page by the server from the route table (lib/routes.ts).
  const PRICING = JSON.parse($("pricing").textContent);
  const STANDARD_MICRO = PRICING.screenshotMicroUsd;
  const MOCKUP_MICRO = PRICING.mockupMicroUsd;
  const MIN_TOPUP_DOLLARS = PRICING.minTopupCents / 100;
  const MAX_TOPUP_DOLLARS = PRICING.maxTopupCents / 100;

  class ApiError extends Error {
    constructor(status, code, message, response, body) {
      super(message);
      this.status = status;
      this.code = code;
      this.response = response;
      this.body = body;
    }
  }

  async function api(path, { method = "GET", body, headers = {}, auth = true } = {}) {
    const key = sessionStorage.getItem(KEY_STORAGE);
    let response;
    // A 429 is answered before any work: the page's own burst (a sign-in loads several panels at
    // once, sharing the account's per-second limit) waits its Retry-After and tries again, twice.
    for (let attempt = 0; ; attempt++) {
      try {
        response = await fetch(`${API}${path}`, {
          method,
          headers: { ...(body ? { "content-type": "application/json" } : {}), ...(auth && key ? { authorization: `Bearer ${key}` } : {}), ...headers },
          body: body ? JSON.stringify(body) : undefined,
          cache: "no-store",
        });
      } catch {
        throw new ApiError(0, "NETWORK", "Shotline could not be reached. Check your connection and try again.");
      }
      const after = response.headers.get("retry-after");
      const wait = Number(after);
      if (response.status !== 429 || attempt === 2 || after === null || !(wait >= 0 && wait <= 5)) break;
      await new Promise((resolve) => setTimeout(resolve, Math.max(wait, 0.25) * 1000));
    }
    const data = await response.json().catch(() => null);
    if (!response.ok) {
      // Our errors are { error: { code, message } }; an x402 402 is { code, error: "<message>", accepts }.
      const error =
        typeof data?.error === "string"
          ? { code: data.code, message: data.error }
          : data?.error
            ? data.error
            : { code: `HTTP_${response.status}`, message: `The server answered ${response.status}.` };
      throw new ApiError(response.status, error.code, error.message, response, data);
    }
    return data;
  }

  /** What the signup answer's `bonus` means for the person who signed up. */
  function bonusNote(bonus) {
    const screenshots = plural(PRICING.signupBonusMicroUsd / STANDARD_MICRO, "free screenshot");
    if (bonus === "credited") return `Your ${screenshots} are on your balance.`;
    if (bonus === "pending_verification") return `We mailed you a link: follow it to receive your ${screenshots}. The key works now with paid credit.`;
    return "This address has no signup bonus (it has had one already, or it is a disposable address). The key works with paid credit.";
  }

  /** An API error in words a person can act on. */
  function explain(error) {
    switch (error.code) {
      case "UNAUTHORIZED":
        return "That API key was not recognised. Check that you pasted all of it (it starts with shl_live_).";
      case "RATE_LIMITED":
        return "Too many attempts in a short time. Wait a moment and try again.";
      case "INVALID_PARAMS":
        return error.message.replace(/^Invalid request: /, "");
      case "INTERNAL_ERROR":
      case "RENDER_ERROR":
        return "Something went wrong on our side. Please try again in a moment.";
      default:
        return error.message || "Something went wrong. Please try again.";
    }
  }

  const dollars = (micro) =>
    (micro / 1e6).toLocaleString("en-US", { style: "currency", currency: "USD", minimumFractionDigits: 2, maximumFractionDigits: micro % 10000 === 0 ? 2 : 4 });
  const plural = (n, word) => `${n.toLocaleString("en-US")} ${word}${n === 1 ? "" : "s"}`;

  $("pricing-line").textContent =
    `Pay per request: ${dollars(STANDARD_MICRO)} a screenshot, ${dollars(MOCKUP_MICRO)} a mockup, ${dollars(PRICING.contentMicroUsd)} a page as Markdown, ${dollars(PRICING.animateMicroUsd)} a scrolling video. Metadata is free. New accounts start with ${plural(PRICING.signupBonusMicroUsd / STANDARD_MICRO, "screenshot")} on us.`;
  $("topup-amount").min = String(MIN_TOPUP_DOLLARS);
  $("topup-amount").max = String(MAX_TOPUP_DOLLARS);

  function show(id, visible) {
    $(id).hidden = !visible;
  }

  let noticeTimer;
  function notify(message, kind = "ok") {
    const notice = $("notice");
    notice.textContent = message;
    notice.className = `notice${kind === "ok" ? "" : ` ${kind}`}`;
    notice.hidden = false;
    clearTimeout(noticeTimer);
    if (kind === "ok") noticeTimer = setTimeout(() => (notice.hidden = true), 6000);
  }

  function fieldError(id, message) {
    $(id).textContent = message || "";
    $(id).hidden = !message;
  }

  async function busy(button, label, work) {
    const original = button.textContent;
    button.disabled = true;
    button.textContent = label;
    try {
      return await work();
    } finally {
      button.disabled = false;
      button.textContent = original;
    }
  }

  // ---- signed out -------------------------------------------------------------------------

  function showSignedOut() {
    show("signed-in", false);
    show("account-nav", false);
    show("new-key", false);
    show("signed-out", true);
  }

  $("signup-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    fieldError("signup-error");
    const email = $("signup-email").value.trim();
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) return fieldError("signup-error", "Enter an email address like you@company.com.");
    const button = event.submitter || $("signup-form").querySelector("button");
    try {
      const account = await busy(button, "Creating…", () => api("/signup", { method: "POST", body: { email }, auth: false }));
      $("new-key-value").textContent = account.api_key;
      $("new-key-bonus").textContent = bonusNote(account.bonus);
      show("signed-out", false);
      show("new-key", true);
    } catch (error) {
      fieldError("signup-error", explain(error));
    }
  });

  $("continue").addEventListener("click", () => signIn($("new-key-value").textContent, $("continue")).then(() => ($("new-key-value").textContent = "")));

  $("signin-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    fieldError("signin-error");
    const key = $("signin-key").value.trim();
    if (!key) return fieldError("signin-error", "Paste your API key first.");
    await signIn(key, event.submitter || $("signin-form").querySelector("button")).catch((error) => fieldError("signin-error", explain(error)));
  });

  async function signIn(key, button) {
    sessionStorage.setItem(KEY_STORAGE, key);
    try {
      const usage = await busy(button, "Signing in…", () => api("/usage"));
      $("signin-key").value = "";
      showSignedIn(usage);
    } catch (error) {
      sessionStorage.removeItem(KEY_STORAGE);
      throw error;
    }
  }

  $("sign-out").addEventListener("click", () => {
    sessionStorage.removeItem(KEY_STORAGE);
    $("notice").hidden = true;
    showSignedOut();
  });

  // ---- signed in --------------------------------------------------------------------------

  function showSignedIn(usage) {
    show("signed-out", false);
    show("new-key", false);
    show("signed-in", true);
    show("account-nav", true);
    const key = sessionStorage.getItem(KEY_STORAGE) || "";
    $("account-label").textContent = `Key ${masked(key)}`;
    // The page never shows a whole key but once, when it is made: Copy puts the real one in the command.
    $("curl").textContent = quickStart(masked(key));
    copyText.curl = () => quickStart(sessionStorage.getItem(KEY_STORAGE) || "");
    renderUsage(usage);
    loadApiKeys();
    loadSigningKeys();
    loadJobs();
    loadMonitors();
  }

  /** A key as lists show it: its first 13 characters and its last 4. */
  const masked = (key) => `${key.slice(0, 13)}…${key.slice(-4)}`;

  const quickStart = (key) =>
    [
      `export SHOTLINE_KEY=${key}`,
      `curl -X POST ${API}/screenshot \\`,
      `  -H "Authorization: Bearer $SHOTLINE_KEY" \\`,
      `  -H "Content-Type: application/json" \\`,
      `  -d '{"url": "https://example.com"}' -o screenshot.png`,
    ].join("\n");

  /** A date and time as the tables show it. */
  const when = (iso) => new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });

  /** A table row of `cells`: the first titled `title`, cell `badge` as a status badge, `classes` by cell. */
  function tableRow(cells, { title, badge, classes }) {
    const row = document.createElement("tr");
    cells.forEach((value, index) => {
      const cell = document.createElement("td");
      if (index === 0) cell.title = title;
      if (classes[index]) cell.className = classes[index];
      if (index === badge) {
        const label = document.createElement("span");
        label.className = `badge ${value}`;
        label.textContent = value;
        cell.append(label);
      } else {
        cell.textContent = value;
      }
      row.append(cell);
    });
    return row;
  }

  // How credits read in the usage table; charges show the endpoint they paid for.
  const ENDPOINT_LABELS = { bonus: "signup bonus", topup: "top-up", "auto-topup": "auto-topup" };

  function renderUsage(usage) {
    document.body.classList.remove("loading");
    const balance = usage.balance_micro_usd;
    $("balance").textContent = dollars(balance);
    // What running jobs hold is out of the balance until their items are charged or give it back.
    const held = usage.held_micro_usd ? `; ${dollars(usage.held_micro_usd)} held by running jobs and crawls` : "";
    $("balance-left").textContent =
      `${plural(Math.floor(balance / STANDARD_MICRO), "screenshot")} or ${plural(Math.floor(balance / MOCKUP_MICRO), "mockup")} left${held}`;
    $("spent").textContent = dollars(usage.total_spent_micro_usd);
    renderAutoTopup(usage.auto_topup);
    show("low-balance", balance < STANDARD_MICRO);

    $("usage-rows").replaceChildren(
      ...usage.recent_usage.map((entry) => {
        const credit = entry.status === "credited";
        return tableRow(
          [
            when(entry.created_at),
            ENDPOINT_LABELS[entry.endpoint] || ENDPOINT_LABELS[entry.kind] || entry.endpoint,
            `${credit ? "+" : ""}${dollars(entry.amount_micro_usd)}`,
            entry.status,
          ],
          { title: entry.created_at, badge: 3, classes: { 2: `num${credit ? " credit" : ""}` } },
        );
      }),
    );
    show("usage-table", usage.recent_usage.length > 0);
    show("usage-empty", usage.recent_usage.length === 0);
  }

  // ---- Jobs (docs/api.md, "Jobs") --------------------------------------------------------------

  /** The newest jobs: when made, endpoint, status, items done of all (failed ones said), and what they cost. */
  async function loadJobs() {
    fieldError("jobs-error");
    let jobs;
    try {
      ({ jobs } = await api("/jobs"));
    } catch (error) {
      return fieldError("jobs-error", explain(error));
    }
    $("jobs-rows").replaceChildren(
      ...jobs.map((job) => {
        const done = `${job.succeeded} of ${job.items}${job.failed ? ` (${job.failed} failed)` : ""}`;
        const row = tableRow([when(job.created_at), job.endpoint, job.status, done, dollars(job.charged_micro_usd)], {
          title: `${job.id}, ${job.created_at}`,
          badge: 2,
          classes: { 3: "num", 4: "num" },
        });
        row.dataset.job = job.id;
        return row;
      }),
    );
    show("jobs-table", jobs.length > 0);
    show("jobs-empty", jobs.length === 0);
  }

  // ---- Crawls (docs/crawl.md, "Crawl") -----------------------------------------------------------

  /** The newest crawls: when made, the site, status, pages delivered of the limit (failed and skipped said), and what they cost. */
  async function loadCrawls() {
    fieldError("crawls-error");
    let crawls;
    try {
      ({ crawls } = await api("/crawl"));
    } catch (error) {
      return fieldError("crawls-error", explain(error));
    }
    $("crawls-rows").replaceChildren(
      ...crawls.map((crawl) => {
        const skipped = Object.values(crawl.counts.skipped).reduce((sum, n) => sum + n, 0);
        const more = [crawl.counts.failed ? `${crawl.counts.failed} failed` : "", skipped ? `${skipped} skipped` : ""].filter(Boolean).join(", ");
        const pages = `${crawl.counts.delivered} of ${crawl.limit}${more ? ` (${more})` : ""}`;
        const row = tableRow([when(crawl.created_at), new URL(crawl.url).host, crawl.status, pages, dollars(crawl.charged_micro_usd)], {
          title: `${crawl.id}, ${crawl.url}`,
          badge: 2,
          classes: { 3: "num", 4: "num" },
        });
        row.dataset.crawl = crawl.id;
        return row;
      }),
    );
    show("crawls-table", crawls.length > 0);
    show("crawls-empty", crawls.length === 0);
  }

  // ---- Monitors (docs/api.md, "Monitors") ------------------------------------------------------

  /** Each monitor: its name or URL, status, schedule, last check, and a thumbnail of its last change. */
  async function loadMonitors() {
    fieldError("monitors-error");
    let monitors;
    try {
      ({ monitors } = await api("/monitors"));
    } catch (error) {
      return fieldError("monitors-error", explain(error));
    }
    $("monitors-list").replaceChildren(
      ...monitors.map((monitor) => {
        const item = document.createElement("li");
        item.dataset.monitor = monitor.id;
        const figure = document.createElement("div");
        figure.className = "thumb";
        if (monitor.last_change?.thumbnailUrl) {
          const image = document.createElement("img");
          image.src = monitor.last_change.thumbnailUrl;
          image.alt = `The last change of ${monitor.name ?? monitor.url}, marked in red`;
          image.loading = "lazy";
          figure.append(image);
        } else {
          figure.textContent = "No change yet";
        }
        const text = document.createElement("div");
        const title = document.createElement("p");
        title.className = "monitor-title";
        title.textContent = monitor.name ?? monitor.url;
        title.title = monitor.url;
        const status = document.createElement("span");
        status.className = `badge ${monitor.status}`;
        status.textContent =
          monitor.paused_reason === "insufficient_balance" ? "paused: balance" : monitor.paused_reason === "failing" ? "paused: failing" : monitor.status;
        const facts = document.createElement("p");
        facts.className = "small muted";
        const last = monitor.last_check ? `last check ${when(monitor.last_check.at)}: ${monitor.last_check.outcome}` : "not checked yet";
        const change = monitor.last_change ? `; changed ${when(monitor.last_change.at)}` : "";
        facts.textContent = `every ${monitor.every}, ${monitor.mode}; ${last}${change}`;
        text.append(title, status, facts);
        item.append(figure, text);
        return item;
      }),
    );
    show("monitors-list", monitors.length > 0);
    show("monitors-empty", monitors.length === 0);
  }

  async function refresh() {
    try {
      renderUsage(await api("/usage"));
      loadJobs();
      loadCrawls();
      loadMonitors();
      // The panel's allowance is the chain's: read again with the rest.
      if (!$("auto-topup-card").hidden) {
        const answer = await api("/auto-topup");
        renderAutoTopup(answer.auto_topup, answer);
      }
    } catch (error) {
      if (error.code === "UNAUTHORIZED") {
        sessionStorage.removeItem(KEY_STORAGE);
        showSignedOut();
        fieldError("signin-error", "This key is no longer valid. Sign in again.");
      } else {
        notify(explain(error), "error");
      }
    }
  }

  $("refresh").addEventListener("click", () => busy($("refresh"), "Refreshing…", refresh));

  // ---- auto-topup ---------------------------------------------------------------------------

  /** The switch, its summary and the panel's facts, from an auto-topup view (null: off). */
  function renderAutoTopup(view, answer) {
    shownAutoTopup = view;
    const on = view?.status === "active";
    $("auto-topup").checked = on;
    $("auto-topup-text").textContent = on ? "On" : view?.status === "paused" ? "Paused" : "Off";
    $("auto-topup-summary").textContent = !view
      ? "Top up from your wallet when the balance runs low."
      : on
        ? `Adds ${dollars(view.amount_cents * 1e4)} below ${dollars(view.threshold_cents * 1e4)}; ${dollars(view.month_total_cents * 1e4)} of ${dollars(view.monthly_cap_cents * 1e4)} this month.`
        : view.paused_reason;
    show("auto-topup-facts", Boolean(view));
    show("auto-topup-off", Boolean(view));
    if (!view) return;
    $("at-status").textContent = on ? (view.in_flight ? "On: a top-up is on its way" : "On") : `Paused. ${view.paused_reason}`;
    $("at-payer").textContent = view.payer;
    $("at-month").textContent = `${dollars(view.month_total_cents * 1e4)} of ${dollars(view.monthly_cap_cents * 1e4)} (${view.month})`;
    $("at-failure").textContent = view.last_failure ? `${new Date(view.last_failure.at).toLocaleString()}: ${view.last_failure.reason}` : "none";
    if (answer)
      $("at-allowance").textContent = answer.allowance_micro_usd === null ? "unknown (the chain did not answer)" : dollars(answer.allowance_micro_usd);
    if (answer?.spender) $("at-spender").textContent = answer.spender;
  }

  /** The auto-topup last shown (null: off). */
  let shownAutoTopup = null;

  /** Opens the panel with the configuration the server has. */
  async function openAutoTopup() {
    show("auto-topup-card", true);
    fieldError("auto-topup-error");
    const answer = await api("/auto-topup");
    if (!answer.offered) return fieldError("auto-topup-error", "Auto-topup is not offered by this server. Top up with your wallet above.");
    const view = answer.auto_topup;
    if (view) {
      $("at-threshold").value = view.threshold_cents / 100;
      $("at-amount").value = view.amount_cents / 100;
      $("at-cap").value = view.monthly_cap_cents / 100;
    }
    renderAutoTopup(view, answer);
    syncAllowanceNote();
    $("auto-topup-card").scrollIntoView({ behavior: "smooth", block: "start" });
  }

  /** The allowance the permit grants: a year of the monthly cap (the most it may pull before you sign again). */
  const allowanceDollars = () => 12 * Number($("at-cap").value);
  const syncAllowanceNote = () =>
    ($("at-allowance-note").textContent =
      `Your wallet signs an allowance of ${dollars(allowanceDollars() * 1e6)} USDC (twelve months at the cap): the most Shotline can ever pull before you sign again.`);
  $("at-cap").addEventListener("input", syncAllowanceNote);

  $("auto-topup-open").addEventListener("click", () => openAutoTopup().catch((error) => notify(explain(error), "error")));
  $("auto-topup-close").addEventListener("click", () => show("auto-topup-card", false));

  // The switch turns it off, and back on after a pause; with nothing set up, it opens the panel.
  $("auto-topup").addEventListener("change", async (event) => {
    const wanted = event.target.checked;
    if (wanted && !shownAutoTopup) {
      event.target.checked = false;
      return openAutoTopup().catch((error) => notify(explain(error), "error"));
    }
    event.target.disabled = true;
    try {
      renderUsage(await api("/account", { method: "PATCH", body: { auto_topup_enabled: wanted } }));
      notify(wanted ? "Auto-topup is on again." : "Auto-topup is off.");
    } catch (error) {
      event.target.checked = !wanted;
      notify(`Auto-topup was not changed: ${explain(error)}`, "error");
    } finally {
      event.target.disabled = false;
    }
  });

  $("auto-topup-off").addEventListener("click", () =>
    busy($("auto-topup-off"), "Turning off…", async () => {
      const answer = await api("/auto-topup", { method: "DELETE" });
      renderAutoTopup(answer.auto_topup, answer);
      notify("Auto-topup is off. Your allowance stays on chain until you revoke it in your wallet.");
    }).catch((error) => fieldError("auto-topup-error", explain(error))),
  );

  const PERMIT = [
    { name: "owner", type: "address" },
    { name: "spender", type: "address" },
    { name: "value", type: "uint256" },
    { name: "nonce", type: "uint256" },
    { name: "deadline", type: "uint256" },
  ];

  $("auto-topup-card").addEventListener("submit", async (event) => {
    event.preventDefault();
    fieldError("auto-topup-error");
    const [threshold, amount, cap] = ["at-threshold", "at-amount", "at-cap"].map((id) => Number($(id).value));
    if (!Number.isInteger(threshold) || threshold < 0) return fieldError("auto-topup-error", "The threshold is a whole number of dollars, 0 or more.");
    if (!Number.isInteger(amount) || amount < MIN_TOPUP_DOLLARS)
      return fieldError("auto-topup-error", `A top-up is a whole number of dollars, at least ${dollars(MIN_TOPUP_DOLLARS * 1e6)}.`);
    if (!Number.isInteger(cap) || cap < amount) return fieldError("auto-topup-error", "The monthly cap is a whole number of dollars, at least one top-up.");
    const wallet = window.ethereum;
    if (!wallet || typeof wallet.request !== "function")
      return fieldError(
        "auto-topup-error",
        "No browser wallet was found. Install one (for example MetaMask or Coinbase Wallet), or set auto-topup from a script: npm run pay -- --auto-topup.",
      );
    const status = (text) => ($("auto-topup-status").textContent = text);
    await busy($("auto-topup-save"), "Waiting for your wallet…", async () => {
      try {
        const offer = await api("/auto-topup");
        if (!offer.offered) throw new ApiError(400, "NOT_OFFERED", "Auto-topup is not offered by this server.");
        status("Connect your wallet…");
        const [owner] = await wallet.request({ method: "eth_requestAccounts" });
        if (!owner) throw new Error("The wallet shared no account.");
        const current = Number.parseInt(await wallet.request({ method: "eth_chainId" }), 16);
        if (current !== offer.chainId) {
          status("Switch your wallet's network…");
          await wallet.request({ method: "wallet_switchEthereumChain", params: [{ chainId: `0x${offer.chainId.toString(16)}` }] });
        }
        // The permit's nonce: USDC's nonces(owner), read through the wallet's own node.
        const nonce = BigInt(
          await wallet.request({
            method: "eth_call",
            params: [{ to: offer.token, data: `0x7ecebe00${owner.slice(2).toLowerCase().padStart(64, "0")}` }, "latest"],
          }),
        ).toString();
        const permit = { value: String(allowanceDollars() * 1e6), deadline: Math.floor(Date.now() / 1000) + 3600 };
        status(`Sign the allowance of ${dollars(allowanceDollars() * 1e6)} USDC in your wallet…`);
        const typedData = {
          types: { EIP712Domain: EIP712_DOMAIN, Permit: PERMIT },
          domain: { name: offer.tokenName, version: offer.tokenVersion, chainId: offer.chainId, verifyingContract: offer.token },
          primaryType: "Permit",
          message: { owner, spender: offer.spender, value: permit.value, nonce, deadline: String(permit.deadline) },
        };
        const signature = await wallet.request({ method: "eth_signTypedData_v4", params: [owner, JSON.stringify(typedData)] });
        status("Granting the allowance on chain…");
        const answer = await api("/auto-topup", {
          method: "PUT",
          body: { threshold_cents: threshold * 100, amount_cents: amount * 100, monthly_cap_cents: cap * 100, payer: owner, permit: { ...permit, signature } },
        });
        status("");
        renderAutoTopup(answer.auto_topup, answer);
        notify(`Auto-topup is on: ${dollars(amount * 1e6)} whenever the balance is below ${dollars(threshold * 1e6)}, at most ${dollars(cap * 1e6)} a month.`);
      } catch (error) {
        status("");
        fieldError("auto-topup-error", error instanceof ApiError ? explain(error) : explainWallet(error));
      }
    });
  });

  /** What Copy copies where it is not what the page shows (a command with the whole key in it). */
  const copyText = {};

  document.addEventListener("click", async (event) => {
    const button = event.target.closest("[data-copy]");
    if (!button) return;
    const value = copyText[button.dataset.copy]?.() ?? $(button.dataset.copy).textContent;
    try {
      await navigator.clipboard.writeText(value);
      button.textContent = "Copied";
    } catch {
      // No clipboard permission (e.g. an http: origin): select the text for a manual copy.
      getSelection().selectAllChildren($(button.dataset.copy));
      button.textContent = "Selected: press Ctrl+C";
    }
    setTimeout(() => (button.textContent = "Copy"), 2000);
  });

  // ---- API keys (docs/api.md, "Keys and accounts") -------------------------------------------

  /** Loads one of the account's key lists into its card, or says there why it could not. */
  async function loadKeys(path, field, render, errorId) {
    fieldError(errorId);
    try {
      render((await api(path))[field]);
    } catch (error) {
      fieldError(errorId, explain(error));
    }
  }

  const loadApiKeys = () => loadKeys("/api-keys", "api_keys", renderApiKeys, "api-keys-error");

  const dateOf = (iso) => new Date(iso).toLocaleDateString(undefined, { dateStyle: "medium" });

  /** A key's row in its list: what names it (code), what is said of it, and its Revoke button (returned, to be marked). */
  function keyRow(list, name, about) {
    const item = document.createElement("li");
    const label = document.createElement("span");
    const code = document.createElement("code");
    code.textContent = name;
    const said = document.createElement("span");
    said.className = "muted small";
    said.textContent = ` ${about}`;
    label.append(code, said);
    const revoke = document.createElement("button");
    revoke.type = "button";
    revoke.className = "button ghost small-button";
    revoke.textContent = "Revoke";
    item.append(label, revoke);
    list.append(item);
    return revoke;
  }

  function renderApiKeys(keys) {
    const list = $("api-keys");
    list.replaceChildren();
    const current = sessionStorage.getItem(KEY_STORAGE) || "";
    for (const key of keys) {
      const mine = current.startsWith(key.start) && current.endsWith(key.end);
      const used = key.last_used_at ? `used ${dateOf(`${key.last_used_at}Z`)}` : "never used";
      const about = `${key.name ? `${key.name}, ` : ""}created ${dateOf(key.created_at)}, ${used}${mine ? " (this page)" : ""}`;
      const revoke = keyRow(list, `${key.start}…${key.end}`, about);
      revoke.dataset.revokeKey = key.id;
      revoke.dataset.mine = mine ? "yes" : "";
      // The last key stays: an account keeps a way in.
      revoke.disabled = keys.length === 1;
      if (revoke.disabled) revoke.title = "An account keeps at least one key: make another first.";
    }
  }

  $("create-api-key").addEventListener("click", async () => {
    fieldError("api-keys-error");
    const name = $("api-key-name").value.trim();
    try {
      const created = await busy($("create-api-key"), "Creating…", () => api("/api-keys", { method: "POST", body: name ? { name } : undefined }));
      $("new-api-key-value").textContent = created.api_key;
      show("new-api-key", true);
      $("api-key-name").value = "";
      await loadApiKeys();
    } catch (error) {
      fieldError("api-keys-error", explain(error));
    }
  });

  $("api-keys").addEventListener("click", async (event) => {
    const button = event.target.closest("[data-revoke-key]");
    if (!button) return;
    const mine = button.dataset.mine === "yes";
    const warning = mine ? " This page is signed in with it: you will be signed out." : " Requests with it are refused within seconds.";
    if (!confirm(`Revoke this API key?${warning}`)) return;
    try {
      await busy(button, "Revoking…", () => api(`/api-keys/${encodeURIComponent(button.dataset.revokeKey)}`, { method: "DELETE" }));
      if (mine) {
        sessionStorage.removeItem(KEY_STORAGE);
        showSignedOut();
        notify("The key this page used is revoked: sign in with another.");
        return;
      }
      show("new-api-key", false);
      notify("Revoked: requests with that key are refused from now on.");
      await loadApiKeys();
    } catch (error) {
      fieldError("api-keys-error", explain(error));
    }
  });

  // ---- signed links: signing keys and the link builder (docs/api.md, "Signed links") --------

  const loadSigningKeys = () => loadKeys("/signing-keys", "signingKeys", renderSigningKeys, "signing-keys-error");

  function renderSigningKeys(keys) {
    const list = $("signing-keys");
    list.replaceChildren();
    const select = $("link-key");
    const chosen = select.value;
    select.replaceChildren();
    for (const key of keys) {
      const limit = key.dailyLimitCents === null ? "no daily limit" : `at most $${(key.dailyLimitCents / 100).toFixed(2)} a day`;
      keyRow(list, key.keyId, `created ${dateOf(key.createdAt)}, ${limit}`).dataset.revoke = key.keyId;
      const option = document.createElement("option");
      option.value = key.keyId;
      option.textContent = key.keyId;
      select.append(option);
    }
    if (keys.some((key) => key.keyId === chosen)) select.value = chosen;
    show("signing-keys-empty", keys.length === 0);
  }

  /** The daily limit typed for a new key, in cents; null for none; undefined when it is not a valid amount. */
  function dailyLimitCents() {
    const typed = $("signing-key-limit").value.trim();
    if (typed === "") return null;
    const cents = Math.round(Number(typed) * 100);
    return Number.isFinite(cents) && cents >= 1 && cents <= 1_000_000 ? cents : undefined;
  }

  $("create-signing-key").addEventListener("click", async () => {
    fieldError("signing-keys-error");
    const limit = dailyLimitCents();
    if (limit === undefined) return fieldError("signing-keys-error", "A daily limit is an amount from $0.01 to $10,000, or empty for none.");
    try {
      const body = limit === null ? undefined : { dailyLimitCents: limit };
      const created = await busy($("create-signing-key"), "Creating…", () => api("/signing-keys", { method: "POST", body }));
      $("new-secret-key").textContent = created.keyId;
      $("new-secret-value").textContent = created.secret;
      show("new-secret", true);
      await loadSigningKeys();
      // Ready to sign with it in this page (the secret stays here).
      $("link-key").value = created.keyId;
      $("link-secret").value = created.secret;
    } catch (error) {
      fieldError("signing-keys-error", error.code === "TOO_MANY_SIGNING_KEYS" ? `${error.message}` : explain(error));
    }
  });

  $("signing-keys").addEventListener("click", async (event) => {
    const button = event.target.closest("[data-revoke]");
    if (!button) return;
    const keyId = button.dataset.revoke;
    if (!confirm(`Revoke ${keyId}? Every link signed with it stops working at once.`)) return;
    try {
      await busy(button, "Revoking…", () => api(`/signing-keys/${encodeURIComponent(keyId)}`, { method: "DELETE" }));
      if ($("new-secret-key").textContent === keyId) show("new-secret", false);
      notify(`Revoked ${keyId}: its links are refused from now on.`);
      await loadSigningKeys();
    } catch (error) {
      fieldError("signing-keys-error", explain(error));
    }
  });

  /** RFC 3986 percent-encoding, as the signature's canonical query writes every name and value. */
  const rfc3986 = (text) => encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

  async function hmacHex(secret, text) {
    const encoder = new TextEncoder();
    const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    const mac = await crypto.subtle.sign("HMAC", key, encoder.encode(text));
    return Array.from(new Uint8Array(mac), (b) => b.toString(16).padStart(2, "0")).join("");
  }

  $("link-builder").addEventListener("submit", async (event) => {
    event.preventDefault();
    fieldError("link-error");
    const url = $("link-url").value.trim();
    const keyId = $("link-key").value;
    const secret = $("link-secret").value.trim();
    if (!/^https?:\/\/\S+$/i.test(url)) return fieldError("link-error", "Enter the page's full address, starting with https://.");
    if (!keyId) return fieldError("link-error", "Create a signing key first.");
    if (!secret) return fieldError("link-error", "Paste the secret of this signing key (shown once, when it was created).");
    if (!crypto.subtle) return fieldError("link-error", "This browser cannot sign here: open the dashboard over https.");
    const width = $("link-width").value.trim();
    if (width && !(Number.isInteger(Number(width)) && Number(width) >= 320 && Number(width) <= 3840))
      return fieldError("link-error", "The width must be a whole number from 320 to 3840.");
    const params = [
      ["url", url],
      ["format", $("link-format").value],
      ...(width ? [["width", width]] : []),
      ...($("link-fullpage").checked ? [["fullPage", "true"]] : []),
      ...($("link-cache").value !== "0" ? [["cacheTtl", $("link-cache").value]] : []),
      ["keyId", keyId],
      ["expires", String(Math.floor(Date.now() / 1000) + Number($("link-expires").value))],
    ];
    const canonical = params
      .slice()
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, value]) => `${rfc3986(name)}=${rfc3986(value)}`)
      .join("&");
    const link = `${API}/screenshot?${canonical}&signature=${await hmacHex(secret, canonical)}`;
    $("link-value").textContent = link;
    // The tag as text: an <img> element, even detached, would load the link (a charged render).
    const attribute = (value) => value.replaceAll("&", "&amp;").replaceAll('"', "&quot;").replaceAll("\u00a0", "&nbsp;");
    $("link-img").textContent = `<img src="${attribute(link)}" alt="${attribute(`Screenshot of ${url}`)}">`;
    show("link-output", true);
  });

  // ---- top-up with an injected EIP-1193 wallet (x402, EIP-3009 authorization) -------------

  function selectedDollars() {
    return Math.round(Number($("topup-amount").value));
  }

  function syncAmount() {
    const amount = selectedDollars();
    for (const chip of document.querySelectorAll(".chip")) chip.setAttribute("aria-pressed", String(Number(chip.dataset.amount) === amount));
    $("topup-pay").textContent = Number.isFinite(amount) && amount > 0 ? `Pay ${dollars(amount * 1e6)} with wallet` : "Pay with wallet";
    $("manual-command").textContent = `npm run pay -- --topup ${Number.isFinite(amount) ? amount * 100 : PRICING.minTopupCents} --key <your key>`;
  }

  for (const chip of document.querySelectorAll(".chip")) {
    chip.addEventListener("click", () => {
      $("topup-amount").value = chip.dataset.amount;
      fieldError("topup-error");
      syncAmount();
    });
  }
  $("topup-amount").addEventListener("input", syncAmount);

  const TRANSFER_WITH_AUTHORIZATION = [
    { name: "from", type: "address" },
    { name: "to", type: "address" },
    { name: "value", type: "uint256" },
    { name: "validAfter", type: "uint256" },
    { name: "validBefore", type: "uint256" },
    { name: "nonce", type: "bytes32" },
  ];
  const EIP712_DOMAIN = [
    { name: "name", type: "string" },
    { name: "version", type: "string" },
    { name: "chainId", type: "uint256" },
    { name: "verifyingContract", type: "address" },
  ];

  const randomNonce = () => `0x${Array.from(crypto.getRandomValues(new Uint8Array(32)), (b) => b.toString(16).padStart(2, "0")).join("")}`;

  /** Wallet errors in words (EIP-1193 codes). */
  function explainWallet(error) {
    if (error && error.code === 4001) return "You declined the request in your wallet. Nothing was paid.";
    if (error && error.code === 4100) return "Your wallet did not allow this site to use the account. Unlock it and try again.";
    if (error && error.code === -32002) return "Your wallet already has a request open. Finish it there, then try again.";
    return `Your wallet reported an error: ${error?.message || error}`;
  }

  $("topup-pay").addEventListener("click", async () => {
    fieldError("topup-error");
    const amount = selectedDollars();
    if (!Number.isFinite(amount) || amount < MIN_TOPUP_DOLLARS) return fieldError("topup-error", `The smallest top-up is ${dollars(MIN_TOPUP_DOLLARS * 1e6)}.`);
    if (amount > MAX_TOPUP_DOLLARS) return fieldError("topup-error", `The largest top-up is ${dollars(MAX_TOPUP_DOLLARS * 1e6)}.`);
    const wallet = window.ethereum;
    if (!wallet || typeof wallet.request !== "function") {
      $("no-wallet").open = true;
      return fieldError(
        "topup-error",
        "No browser wallet was found. Install one (for example MetaMask or Coinbase Wallet) with USDC, or pay from a script as shown below.",
      );
    }
    const status = (text) => ($("topup-status").textContent = text);
    await busy($("topup-pay"), "Waiting for your wallet…", async () => {
      try {
        // 1. The price of this top-up, as x402 payment requirements (402 is the expected answer).
        status("Asking for the payment details…");
        let required;
        try {
          await api("/topup", { method: "POST", body: { amount_cents: amount * 100 } });
          throw new Error("The server did not ask for a payment.");
        } catch (error) {
          if (!(error instanceof ApiError) || error.status !== 402) throw error;
          const header = error.response.headers.get("PAYMENT-REQUIRED");
          if (!header) throw new ApiError(402, "NO_X402", "USDC top-ups are not enabled on this server.");
          required = JSON.parse(atob(header));
        }
        const accept = required.accepts[0];
        const chainId = Number(accept.network.split(":")[1]);

        // 2. The wallet's account, on the right chain.
        status("Connect your wallet…");
        const [from] = await wallet.request({ method: "eth_requestAccounts" });
        if (!from) throw new Error("The wallet shared no account.");
        const current = Number.parseInt(await wallet.request({ method: "eth_chainId" }), 16);
        if (current !== chainId) {
          status("Switch your wallet's network…");
          await wallet.request({ method: "wallet_switchEthereumChain", params: [{ chainId: `0x${chainId.toString(16)}` }] });
        }

        // 3. Sign the USDC transfer authorization (EIP-3009 as EIP-712 typed data): no gas, no transaction.
        status(`Approve the payment of ${dollars(Number(accept.amount))} USDC in your wallet…`);
        const authorization = {
          from,
          to: accept.payTo,
          value: accept.amount,
          validAfter: "0",
          validBefore: String(Math.floor(Date.now() / 1000) + accept.maxTimeoutSeconds),
          nonce: randomNonce(),
        };
        const typedData = {
          types: { EIP712Domain: EIP712_DOMAIN, TransferWithAuthorization: TRANSFER_WITH_AUTHORIZATION },
          domain: { name: accept.extra.name, version: accept.extra.version, chainId, verifyingContract: accept.asset },
          primaryType: "TransferWithAuthorization",
          message: authorization,
        };
        const signature = await wallet.request({ method: "eth_signTypedData_v4", params: [from, JSON.stringify(typedData)] });

        // 4. Repeat the top-up with the payment; the server settles it and credits the balance.
        status("Settling the payment…");
        const payment = { x402Version: 2, payload: { authorization, signature }, resource: required.resource, accepted: accept };
        const usage = await api("/topup", {
          method: "POST",
          body: { amount_cents: amount * 100 },
          headers: { "PAYMENT-SIGNATURE": btoa(JSON.stringify(payment)) },
        });
        renderUsage(usage);
        status("");
        if (usage.topup?.status === "pending")
          notify(`Your payment of ${dollars(amount * 1e6)} is being confirmed on chain; your balance shows it within a few minutes.`);
        else notify(`Added ${dollars(amount * 1e6)} to your balance.`);
      } catch (error) {
        status("");
        if (error instanceof ApiError) {
          fieldError(
            "topup-error",
            error.status === 402 && error.code === "PAYMENT_REQUIRED"
              ? `The payment was not accepted. ${error.message.replace(/ This request costs.*$/, "")}`
              : explain(error),
          );
        } else {
          fieldError("topup-error", explainWallet(error));
        }
      }
    });
  });

  // ---- start --------------------------------------------------------------------------------

  syncAmount();
  syncAllowanceNote();
  if (sessionStorage.getItem(KEY_STORAGE)) {
    document.body.classList.add("loading");
    show("signed-in", true);
    show("account-nav", true);
    api("/usage")
      .then(showSignedIn)
      .catch((error) => {
        document.body.classList.remove("loading");
        if (error.code === "UNAUTHORIZED") sessionStorage.removeItem(KEY_STORAGE);
        showSignedOut();
        if (error.code !== "UNAUTHORIZED") notify(explain(error), "error");
      });
  } else {
    showSignedOut();
  }
})();
