// The dashboard driven in the same Chromium as the service (puppeteer-core), against a local stack
// of its own: its top-up pays from the dev payer on its own anvil chain, so the x402 tests' exact
// balance checks on the shared chain are not disturbed. The wallet is an injected EIP-1193 provider
// whose signatures come from the dev payer's key (real EIP-712 signatures, real settlement).
import { mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { createPublicClient, erc20Abi, type Hex, http, type TypedDataDefinition } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { quietChromium } from "../../dev/harness/browser.js";
import { type DevProcess, startDev } from "../../dev/harness/dev-process.js";

const SCREENSHOT_DIR = path.join(tmpdir(), "shotline-dashboard-shots");

let dev: DevProcess;
let browser: Browser;
let walletMode: "sign" | "reject" = "sign";

beforeAll(async () => {
  dev = await startDev({ ALLOWED_PRIVATE_HOSTS: [new URL(inject("fixtureUrl")).host, new URL(inject("crawlSites").b).host].join(",") });
  browser = await puppeteer.launch({ ...(await quietChromium()), pipe: true });
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  await dev?.stop();
});

/** A dashboard tab; with `wallet`, window.ethereum signs with the dev payer's key in this process. */
async function openDashboard(options: { wallet: boolean; width?: number }): Promise<Page> {
  const page = await browser.newPage();
  await page.setViewport({ width: options.width ?? 1280, height: 900, deviceScaleFactor: 1 });
  if (options.wallet) {
    const account = privateKeyToAccount(dev.info.payerPrivateKey as Hex);
    await page.exposeFunction("__payerWallet", async (method: string, params: unknown[]) => {
      if (walletMode === "reject") return { error: { code: 4001, message: "User rejected the request." } };
      switch (method) {
        case "eth_requestAccounts":
        case "eth_accounts":
          return { result: [account.address] };
        case "eth_chainId":
          return { result: `0x${dev.info.chainId.toString(16)}` };
        case "eth_call": {
          // Reads go to the wallet's node: the local chain.
          const [call] = params as [{ to: Hex; data: Hex }];
          const { data } = await createPublicClient({ transport: http(dev.info.rpcUrl) }).call({ to: call.to, data: call.data });
          return { result: data ?? "0x" };
        }
        case "eth_signTypedData_v4": {
          const typed = JSON.parse(params[1] as string) as {
            types: Record<string, unknown>;
            domain: Record<string, unknown>;
            primaryType: string;
            message: Record<string, string>;
          };
          // What a wallet does: EIP712Domain is implied by the domain; uint256 values as numbers.
          const { EIP712Domain: _domain, ...types } = typed.types;
          const fields = types[typed.primaryType] as { name: string; type: string }[];
          const message = Object.fromEntries(
            Object.entries(typed.message).map(([name, value]) => [name, fields.find((f) => f.name === name)?.type === "uint256" ? BigInt(value) : value]),
          );
          const signature = await account.signTypedData({
            domain: typed.domain,
            types,
            primaryType: typed.primaryType,
            message,
          } as unknown as TypedDataDefinition);
          return { result: signature };
        }
        default:
          return { error: { code: 4200, message: `unsupported method ${method}` } };
      }
    });
    await page.evaluateOnNewDocument(`window.ethereum = {
      isShotlineTestWallet: true,
      async request({ method, params }) {
        const answer = await window.__payerWallet(method, params || []);
        if (answer.error) throw Object.assign(new Error(answer.error.message), { code: answer.error.code });
        return answer.result;
      },
    };`);
  }
  const response = await page.goto(`${dev.info.baseUrl}/dashboard`, { waitUntil: "load" });
  expect(response?.status()).toBe(200);
  return page;
}

// What a person sees: innerText, which follows layout and CSS, unlike textContent.
// biome-ignore lint/performance/useDomNodeTextContent: the rendered text is the point.
const textOf = (page: Page, selector: string) => page.$eval(selector, (el) => (el as HTMLElement).innerText.trim());
// A wide margin: the page waits on the local stack, which shares the machine with the rest of the suite.
const visible = (page: Page, selector: string) => page.waitForSelector(selector, { visible: true, timeout: 30_000 });
const usage = async (key: string) => {
  const res = await fetch(`${dev.info.baseUrl}/api/v1/usage`, { headers: { authorization: `Bearer ${key}` } });
  const body = await res.text();
  expect(res.status, body).toBe(200);
  return JSON.parse(body) as { balance_micro_usd: number; auto_topup_enabled: boolean };
};

async function signUpThroughPage(page: Page, email: string): Promise<string> {
  await visible(page, "#signup-form");
  await page.type("#signup-email", email);
  await page.click("#signup-form button[type=submit]");
  await visible(page, "#new-key");
  const key = await textOf(page, "#new-key-value");
  expect(key).toMatch(/^shl_live_[\w-]{40,}$/);
  expect(await textOf(page, "#new-key-bonus")).toBe("Your 50 free screenshots are on your balance.");
  return key;
}

describe("dashboard", () => {
  it("is one self-contained document with a strict Content-Security-Policy", async () => {
    const res = await fetch(`${dev.info.baseUrl}/dashboard`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("content-security-policy")).toMatch(/default-src 'none'; script-src 'sha256-[^']+'; style-src 'sha256-[^']+'.*connect-src 'self'/);
    const html = await res.text();
    expect(html).not.toContain("/* SCRIPT */");
    expect(html).not.toContain('"PRICING"');
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+stylesheet/);
  });

  it("signs up, shows the key once, signs in with it, lists usage, tops up $5 with a wallet, and sets up auto-topup with a permit", async () => {
    const page = await openDashboard({ wallet: true });
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(String(error)));
    // Chrome logs every non-2xx fetch; the top-up's first answer is x402's expected 402.
    page.on("console", (message) => message.type() === "error" && !/status of 402/.test(message.text()) && errors.push(message.text()));

    // Prices come from the route table (lib/routes.ts), written into the page by the server.
    expect(await textOf(page, "#pricing-line")).toBe(
      "Pay per request: $0.005 a screenshot, $0.01 a mockup, $0.002 a page as Markdown, $0.02 a scrolling video. Metadata is free. New accounts start with 50 screenshots on us.",
    );
    // The welcome names what is sold now, not only screenshots.
    expect(await textOf(page, "#signed-out h1")).toBe("Screenshots, mockups, pages as Markdown, scrolling videos and watched pages, by API.");
    const key = await signUpThroughPage(page, `dash-${Date.now()}@shotline.test`);
    await page.click("#continue");
    await visible(page, "#signed-in");
    await page.waitForFunction(() => document.getElementById("balance")!.textContent === "$0.25");
    expect(await textOf(page, "#balance-left")).toBe("50 screenshots or 25 mockups left");
    // The key is in this tab's sessionStorage only, never in the URL.
    expect(await page.evaluate(() => sessionStorage.getItem("shotline.apiKey"))).toBe(key);
    expect(page.url()).not.toContain(key);
    expect(await textOf(page, "#curl")).toContain(
      `export SHOTLINE_KEY=${key.slice(0, 13)}…${key.slice(-4)}\ncurl -X POST ${dev.info.baseUrl}/api/v1/screenshot`,
    );

    // Two API calls, then the usage table lists them (newest first).
    const call = (path: string, body: unknown) =>
      fetch(`${dev.info.baseUrl}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
        body: JSON.stringify(body),
      });
    expect((await call("/api/v1/screenshot", { url: `${inject("fixtureUrl")}/simple`, width: 320, deviceScaleFactor: 1 })).status).toBe(200);
    expect((await call("/api/v1/html-to-screenshot", { html: "<h1>hi</h1>", width: 320, deviceScaleFactor: 1 })).status).toBe(200);
    await page.click("#refresh");
    await page.waitForFunction(() => document.querySelectorAll("#usage-rows tr").length >= 2);
    const rows = await page.$$eval("#usage-rows tr", (trs) =>
      trs.map((tr) =>
        Array.from(tr.querySelectorAll("td"))
          .slice(1)
          .map((td) => td.textContent),
      ),
    );
    expect(rows.slice(0, 2)).toEqual([
      ["html-to-screenshot", "$0.005", "charged"],
      ["screenshot", "$0.005", "charged"],
    ]);
    expect(await textOf(page, "#balance")).toBe("$0.24");

    // Top-up: $5 in USDC signed by the wallet, settled on the local chain, credited without a reload.
    const chain = createPublicClient({ transport: http(dev.info.rpcUrl) });
    const usdcOf = (address: string) =>
      chain.readContract({ address: dev.info.usdcAddress as Hex, abi: erc20Abi, functionName: "balanceOf", args: [address as Hex] });
    const payer = privateKeyToAccount(dev.info.payerPrivateKey as Hex).address;
    const [payerBefore, payToBefore] = [await usdcOf(payer), await usdcOf(dev.info.payTo)];
    const before = (await usage(key)).balance_micro_usd;
    await page.click(".chip[data-amount='5']");
    expect(await textOf(page, "#topup-pay")).toBe("Pay $5.00 with wallet");
    await page.click("#topup-pay");
    await page.waitForFunction(() => document.getElementById("notice")!.textContent === "Added $5.00 to your balance.", { timeout: 20_000 });
    expect(await textOf(page, "#balance")).toBe("$5.24");
    expect((await usage(key)).balance_micro_usd).toBe(before + 5_000_000);
    expect(await usdcOf(payer)).toBe(payerBefore - 5_000_000n);
    expect(await usdcOf(dev.info.payTo)).toBe(payToBefore + 5_000_000n);
    expect(
      await page.$eval("#usage-rows tr", (tr) =>
        Array.from(tr.querySelectorAll("td"))
          .slice(1)
          .map((td) => td.textContent),
      ),
    ).toEqual(["top-up", "+$5.00", "credited"]);

    // Auto-topup: the switch has nothing to turn on yet, so it opens the panel; the wallet signs a
    // permit (no gas), the server submits it, and the balance ($5.24) is below the threshold ($6): a pull.
    await page.click(".switch");
    await visible(page, "#auto-topup-card");
    expect(await page.$eval("#auto-topup", (el) => (el as HTMLInputElement).checked)).toBe(false);
    expect(await textOf(page, "#at-allowance-note")).toBe(
      "Your wallet signs an allowance of $240.00 USDC (twelve months at the cap): the most Shotline can ever pull before you sign again.",
    );
    await page.$eval("#at-threshold", (el) => ((el as HTMLInputElement).value = ""));
    await page.type("#at-threshold", "6");
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, "auto-topup-desktop.png"), fullPage: true });
    const payerBeforePull = await usdcOf(payer);
    await page.click("#auto-topup-save");
    await page.waitForFunction(
      () => document.getElementById("notice")!.textContent === "Auto-topup is on: $5.00 whenever the balance is below $6.00, at most $20.00 a month.",
      { timeout: 30_000 },
    );
    expect(await textOf(page, "#at-allowance")).toMatch(/^\$2[34]\d\.00$/);
    expect(await textOf(page, "#at-spender")).toMatch(/^0x[0-9a-fA-F]{40}$/);
    const pulled = await (async () => {
      for (let i = 0; i < 120; i++) {
        const report = await usage(key);
        if (report.balance_micro_usd === before + 10_000_000) return report;
        await sleep(250);
      }
      throw new Error("the auto-topup pull was not credited within 30 s");
    })();
    expect(pulled.auto_topup_enabled).toBe(true);
    expect(await usdcOf(payer)).toBe(payerBeforePull - 5_000_000n);
    await page.click("#refresh");
    await page.waitForFunction(() => document.getElementById("balance")!.textContent === "$10.24");
    expect(await textOf(page, "#auto-topup-summary")).toBe("Adds $5.00 below $6.00; $5.00 of $20.00 this month.");
    expect(await textOf(page, "#at-month")).toMatch(/^\$5\.00 of \$20\.00 \(\d{4}-\d{2}\)$/);
    expect(await textOf(page, "#at-failure")).toBe("none");
    await page.waitForFunction(() => document.getElementById("at-allowance")!.textContent === "$235.00");
    expect(
      await page.$eval("#usage-rows tr", (tr) =>
        Array.from(tr.querySelectorAll("td"))
          .slice(1)
          .map((td) => td.textContent),
      ),
    ).toEqual(["auto-topup", "+$5.00", "credited"]);

    // What a person sees, at desktop and phone width (looked at; see SCREENSHOT_DIR).
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, "signed-in-desktop.png"), fullPage: true });
    // (Changing isMobile would reload the page; the layout only depends on the width.)
    await page.setViewport({ width: 390, height: 844, deviceScaleFactor: 2 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, "signed-in-phone.png"), fullPage: true });
    // Turned off from the panel: the switch follows, the allowance stays on chain.
    await page.click("#auto-topup-off");
    await page.waitForFunction(() => document.getElementById("notice")!.textContent!.startsWith("Auto-topup is off."));
    expect(await page.$eval("#auto-topup", (el) => (el as HTMLInputElement).checked)).toBe(false);
    expect((await usage(key)).auto_topup_enabled).toBe(false);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("says so when the wallet declines, and when there is no wallet, without charging anything", async () => {
    const page = await openDashboard({ wallet: true });
    const key = await signUpThroughPage(page, `decline-${Date.now()}@shotline.test`);
    await page.click("#continue");
    await visible(page, "#signed-in");
    const before = (await usage(key)).balance_micro_usd;
    walletMode = "reject";
    try {
      await page.click("#topup-pay");
      await visible(page, "#topup-error");
      expect(await textOf(page, "#topup-error")).toBe("You declined the request in your wallet. Nothing was paid.");
    } finally {
      walletMode = "sign";
    }
    expect((await usage(key)).balance_micro_usd).toBe(before);

    const bare = await openDashboard({ wallet: false });
    // The key is per tab (sessionStorage): a new tab starts signed out.
    await visible(bare, "#signin-form");
    await bare.type("#signin-key", key);
    await bare.click("#signin-form button[type=submit]");
    await visible(bare, "#signed-in");
    await bare.click("#topup-pay");
    await visible(bare, "#topup-error");
    expect(await textOf(bare, "#topup-error")).toMatch(/^No browser wallet was found/);
    expect(await bare.$eval("#no-wallet", (d) => (d as HTMLDetailsElement).open)).toBe(true);
    expect(await textOf(bare, "#manual-command")).toBe("npm run pay -- --topup 500 --key <your key>");
    await page.close();
    await bare.close();
  });

  it("shows a wrong key as an error a person understands; a known address signs up without a second bonus, and is told so", async () => {
    const page = await openDashboard({ wallet: false, width: 390 });
    await visible(page, "#signin-form");
    await page.type("#signin-key", "shl_live_not-a-real-key");
    await page.click("#signin-form button[type=submit]");
    await visible(page, "#signin-error");
    expect(await textOf(page, "#signin-error")).toMatch(/^That API key was not recognised/);
    expect(await page.evaluate(() => sessionStorage.getItem("shotline.apiKey"))).toBeNull();

    const email = `taken-${Date.now()}@shotline.test`;
    await fetch(`${dev.info.baseUrl}/api/v1/signup`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email }) });
    await page.type("#signup-email", email);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, "signed-out-phone-errors.png"), fullPage: true });
    await page.click("#signup-form button[type=submit]");
    await visible(page, "#new-key");
    expect(await textOf(page, "#new-key-bonus")).toMatch(/^This address has no signup bonus \(it has had one already/);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, "signed-up-again-phone.png"), fullPage: true });
    await page.close();
  });

  it("shows a whole key only once, when it is made; manages API keys; Quick start's Copy carries the real key", async () => {
    const page = await openDashboard({ wallet: false });
    await browser.defaultBrowserContext().overridePermissions(dev.info.baseUrl, ["clipboard-read", "clipboard-write", "clipboard-sanitized-write"]);
    page.on("dialog", (dialog) => void dialog.accept());
    const key = await signUpThroughPage(page, `keys-${Date.now()}@shotline.test`);
    await page.click("#continue");
    await visible(page, "#api-keys-card");
    // Nowhere in the page (its text, its attributes, its markup) is the key, once signed in.
    const html = async () => page.evaluate(() => document.documentElement.outerHTML);
    await page.waitForFunction(() => document.querySelectorAll("#api-keys li").length === 1);
    expect(await html()).not.toContain(key);
    expect(await textOf(page, "#curl")).toContain(`${key.slice(0, 13)}…${key.slice(-4)}`);
    expect(await textOf(page, "#api-keys")).toContain("(this page)");
    // Copy gives the command that runs: with the key.
    await page.click('[data-copy="curl"]');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toContain(`export SHOTLINE_KEY=${key}\n`);
    // The only key cannot be revoked.
    expect(await page.$eval("#api-keys [data-revoke-key]", (el) => (el as HTMLButtonElement).disabled)).toBe(true);

    // A second, named key: shown once, then listed by its ends.
    await page.type("#api-key-name", "CI");
    await page.click("#create-api-key");
    await visible(page, "#new-api-key");
    const second = await textOf(page, "#new-api-key-value");
    expect(second).toMatch(/^shl_live_/);
    await page.waitForFunction(() => document.querySelectorAll("#api-keys li").length === 2);
    expect(await textOf(page, "#api-keys")).toContain(`${second.slice(0, 13)}…${second.slice(-4)} CI, created`);
    expect((await usage(second)).balance_micro_usd).toBe((await usage(key)).balance_micro_usd);
    // Revoked in the page: refused within seconds; the list is back to one, which stays. The
    // account's per-second limit spent first by another of its clients: the page's request waits
    // out its 429 (Retry-After) rather than failing.
    let spent = 0;
    while (spent < 50 && (await fetch(`${dev.info.baseUrl}/api/v1/usage`, { headers: { authorization: `Bearer ${key}` } })).status !== 429) spent++;
    expect(spent).toBeLessThan(50);
    await page.click(`#api-keys li:nth-child(2) [data-revoke-key]`);
    await page.waitForFunction(() => document.querySelectorAll("#api-keys li").length === 1);
    const revokedAt = Date.now();
    // (Polled gently: the account's rate limit is shared by its keys.)
    while ((await fetch(`${dev.info.baseUrl}/api/v1/usage`, { headers: { authorization: `Bearer ${second}` } })).status !== 401) {
      expect(Date.now() - revokedAt).toBeLessThan(15_000);
      await sleep(250);
    }
    // After a reload (signed in from this tab's storage), still no whole key anywhere.
    await page.reload({ waitUntil: "load" });
    await page.waitForFunction(() => document.querySelectorAll("#api-keys li").length === 1);
    expect(await html()).not.toContain(key);
    expect(await html()).not.toContain(second);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, "api-keys-desktop.png"), fullPage: true });
    await page.close();
  });

  it("lists the account's jobs with their items' status and cost, at 1280 and 390 px", async () => {
    const page = await openDashboard({ wallet: false });
    const key = await signUpThroughPage(page, `jobs-${Date.now()}@shotline.test`);
    await page.click("#continue");
    await visible(page, "#jobs-card");
    expect(await textOf(page, "#jobs-empty")).toBe("No jobs yet.");
    const items = [1, 2].map((n) => ({ html: `<h1>Item ${n}</h1>`, width: 400, deviceScaleFactor: 1 }));
    const made = await fetch(`${dev.info.baseUrl}/api/v1/jobs`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({ endpoint: "html-to-screenshot", items }),
    });
    const { id } = (await made.json()) as { id: string };
    for (let waited = 0; waited < 60_000; waited += 250) {
      const job = (await (await fetch(`${dev.info.baseUrl}/api/v1/jobs/${id}`, { headers: { authorization: `Bearer ${key}` } })).json()) as { status: string };
      if (job.status === "completed") break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    await page.click("#refresh");
    await page.waitForSelector(`#jobs-rows tr[data-job="${id}"]`, { timeout: 30_000 });
    const cells = await page.$$eval(`#jobs-rows tr[data-job="${id}"] td`, (tds) => tds.map((td) => (td.textContent ?? "").trim()));
    expect(cells.slice(1)).toEqual(["html-to-screenshot", "completed", "2 of 2", "$0.01"]);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, "jobs-desktop.png"), fullPage: true });
    await page.setViewport({ width: 390, height: 844, deviceScaleFactor: 1 });
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, "jobs-phone.png"), fullPage: true });
    // Nothing on the page spills out sideways at a phone's width.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.close();
  });

  it("lists the account's crawls with their pages delivered of the limit and their cost, at 1280 and 390 px", async () => {
    const page = await openDashboard({ wallet: false });
    const key = await signUpThroughPage(page, `crawls-${Date.now()}@shotline.test`);
    await page.click("#continue");
    await visible(page, "#crawls-card");
    expect(await textOf(page, "#crawls-empty")).toBe("No crawls yet.");
    const site = inject("crawlSites").b;
    const made = await fetch(`${dev.info.baseUrl}/api/v1/crawl`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({ url: `${site}/`, limit: 2, render: "never", headers: { "x-crawl-run": `dashboard-${Date.now()}` } }),
    });
    const { id } = (await made.json()) as { id: string };
    for (let waited = 0; waited < 60_000; waited += 250) {
      const crawl = (await (await fetch(`${dev.info.baseUrl}/api/v1/crawl/${id}`, { headers: { authorization: `Bearer ${key}` } })).json()) as {
        status: string;
      };
      if (crawl.status !== "running") break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    await page.click("#refresh");
    await page.waitForSelector(`#crawls-rows tr[data-crawl="${id}"]`, { timeout: 30_000 });
    const cells = await page.$$eval(`#crawls-rows tr[data-crawl="${id}"] td`, (tds) => tds.map((td) => (td.textContent ?? "").trim()));
    expect(cells.slice(1, 3)).toEqual([new URL(site).host, "completed"]);
    expect(cells[3]).toMatch(/^2 of 2\b/);
    expect(cells[4]).toBe("$0.002");
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, "crawls-desktop.png"), fullPage: true });
    await page.setViewport({ width: 390, height: 844, deviceScaleFactor: 1 });
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, "crawls-phone.png"), fullPage: true });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.close();
  });

  it("lists the account's monitors with their last check and a thumbnail of the last change, at 1280 and 390 px", async () => {
    const page = await openDashboard({ wallet: false });
    const key = await signUpThroughPage(page, `monitors-${Date.now()}@shotline.test`);
    await page.click("#continue");
    await visible(page, "#monitors-card");
    expect(await textOf(page, "#monitors-empty")).toBe("No monitors yet.");
    const id = `dash-${Date.now()}`;
    const call = async (method: string, route: string, body?: unknown) =>
      (await (
        await fetch(`${dev.info.baseUrl}/api/v1${route}`, {
          method,
          headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
          ...(body ? { body: JSON.stringify(body) } : {}),
        })
      ).json()) as Record<string, unknown>;
    const checked = async (monitorId: string, checkId: string) => {
      for (let waited = 0; waited < 60_000; waited += 250) {
        const { checks } = (await call("GET", `/monitors/${monitorId}/checks`)) as { checks: { id: string; status: string; outcome?: string }[] };
        const check = checks.find((c) => c.id === checkId);
        if (check?.status === "done") return check.outcome;
        await sleep(250);
      }
      return "not done";
    };
    const monitor = (await call("POST", "/monitors", {
      url: `${inject("fixtureUrl")}/monitor/article?id=${id}`,
      name: "Pricing page",
      every: "6h",
      width: 1000,
      height: 700,
    })) as { id: string; first_check_id: string };
    expect(await checked(monitor.id, monitor.first_check_id)).toBe("baseline");
    await fetch(`${inject("fixtureUrl")}/monitor/set?id=${id}&v=edited`);
    const { check_id: checkId } = (await call("POST", `/monitors/${monitor.id}/check`)) as { check_id: string };
    expect(await checked(monitor.id, checkId)).toBe("changed");
    await page.click("#refresh");
    const item = `#monitors-list li[data-monitor="${monitor.id}"]`;
    await page.waitForSelector(`${item} .thumb img`, { timeout: 30_000 });
    expect(await textOf(page, `${item} .monitor-title`)).toBe("Pricing page");
    expect(await textOf(page, `${item} .badge`)).toBe("active");
    expect(await textOf(page, `${item} .small`)).toMatch(/^every 6h, both; last check .+: changed; changed /);
    // The thumbnail loads (the page's policy lets the bucket's links in) and shows the change in red.
    await page.waitForFunction(
      (selector) => (document.querySelector(selector) as HTMLImageElement | null)?.naturalWidth,
      { timeout: 30_000 },
      `${item} .thumb img`,
    );
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, "monitors-desktop.png"), fullPage: true });
    await page.setViewport({ width: 390, height: 844, deviceScaleFactor: 1 });
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, "monitors-phone.png"), fullPage: true });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.close();
  }, 120_000);

  it("manages signing keys and builds a signed link that renders as an <img>, refused once its key is revoked", async () => {
    const page = await openDashboard({ wallet: false });
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(String(error)));
    page.on("dialog", (dialog) => void dialog.accept());
    await signUpThroughPage(page, `links-${Date.now()}@shotline.test`);
    await page.click("#continue");
    await visible(page, "#signed-links");
    // The lists above the signing keys fill in as their requests answer, moving the buttons below them: a click
    // aimed before they settle can land beside its button (one CI run on a busy machine). Wait for a quiet network.
    await page.waitForNetworkIdle({ idleTime: 500, timeout: 30_000 });
    expect(await textOf(page, "#signing-keys-empty")).toBe("No signing keys yet.");

    // A daily limit that is not an amount is explained, and nothing is created.
    await page.type("#signing-key-limit", "0");
    await visible(page, "#create-signing-key");
    await page.click("#create-signing-key");
    // (Read once shown: on a busy machine the first read came before the message, in one CI run.)
    await page.waitForFunction(() => (document.querySelector("#signing-keys-error") as HTMLElement | null)?.textContent?.trim() !== "", { timeout: 5_000 });
    expect(await textOf(page, "#signing-keys-error")).toBe("A daily limit is an amount from $0.01 to $10,000, or empty for none.");
    await page.$eval("#signing-key-limit", (el) => ((el as HTMLInputElement).value = ""));
    await page.type("#signing-key-limit", "2.5");
    // A new key: its secret shown once, the key listed with its limit and chosen in the builder with its secret.
    await page.click("#create-signing-key");
    // Either outcome ends the wait, so a refusal fails here with its message rather than as a timeout.
    await page.waitForFunction(() => !document.getElementById("new-secret")!.hidden || !document.getElementById("signing-keys-error")!.hidden, {
      timeout: 30_000,
    });
    expect(await textOf(page, "#signing-keys-error")).toBe("");
    await visible(page, "#new-secret");
    const keyId = await textOf(page, "#new-secret-key");
    const secret = await textOf(page, "#new-secret-value");
    expect(keyId).toMatch(/^sk_/);
    expect(secret).toMatch(/^sks_/);
    await page.waitForFunction((id) => document.querySelector("#signing-keys")!.textContent!.includes(id), {}, keyId);
    expect(await textOf(page, "#signing-keys")).toContain("at most $2.50 a day");
    expect(await page.$eval("#link-key", (el) => (el as HTMLSelectElement).value)).toBe(keyId);

    // The builder: a bad URL is explained; a good one gives a URL and an <img> tag, and renders nothing.
    const renders: string[] = [];
    page.on("request", (request) => {
      if (request.url().includes("/api/v1/screenshot?")) renders.push(request.url());
    });
    await page.click("#link-builder button[type=submit]");
    expect(await textOf(page, "#link-error")).toBe("Enter the page's full address, starting with https://.");
    await page.type("#link-url", `${inject("fixtureUrl")}/simple`);
    await page.type("#link-width", "400");
    await page.select("#link-cache", "3600");
    await page.click("#link-builder button[type=submit]");
    await visible(page, "#link-output");
    const link = await textOf(page, "#link-value");
    expect(link).toMatch(new RegExp(`^${dev.info.baseUrl}/api/v1/screenshot\\?.*keyId=${keyId}.*&signature=[0-9a-f]{64}$`));
    const tag = await textOf(page, "#link-img");
    expect(tag).toBe(`<img src="${link.replaceAll("&", "&amp;")}" alt="Screenshot of ${inject("fixtureUrl")}/simple">`);
    // Signing a link sends nothing: no request for it (each would be a charged render).
    await page.click("#link-builder button[type=submit]");
    await page.waitForNetworkIdle({ idleTime: 500, timeout: 10_000 });
    expect(renders).toEqual([]);

    // The tag in a page of another origin shows the screenshot.
    const viewer = await browser.newPage();
    await viewer.goto(`${inject("fixtureUrl")}/simple`);
    const width = await viewer.evaluate(async (html) => {
      document.body.innerHTML = html;
      const img = document.querySelector("img")!;
      await img.decode();
      return img.naturalWidth;
    }, tag);
    expect(width).toBe(800); // 400 CSS px at the default scale factor of 2
    await viewer.close();

    await page.screenshot({ path: path.join(SCREENSHOT_DIR, "signed-links-desktop.png"), fullPage: true });
    await page.setViewport({ width: 390, height: 844, deviceScaleFactor: 2 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, "signed-links-phone.png"), fullPage: true });

    // Revoked in the dashboard: the link is refused from now on.
    await page.click(`[data-revoke="${keyId}"]`);
    await page.waitForFunction(() => document.getElementById("signing-keys-empty")!.hidden === false);
    const refused = await fetch(link);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("INVALID_SIGNATURE");
    expect(errors).toEqual([]);
    await page.close();
  });
});
