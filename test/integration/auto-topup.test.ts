// Auto-topup on the local chain (anvil with Circle's USDC): a permit granted through the API, charges
// crossing the threshold, the pull sent by the top-up key and credited once; the cap, failures and
// their backoff, a crash between sending and recording. The API through the shared stack (which
// launches pulls in its own process, as `npm run dev` does); the pull and the reconciler's round
// also in this process against the same table and chain, to drive the cases a request cannot.
import { createPublicClient, createWalletClient, erc20Abi, type Hex, http, parseAbi } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { DEV_KEYS } from "../../dev/chain.js";
import { type ErrorBody, postJson } from "../helpers/api.js";
import { useSharedStackInProcess } from "../helpers/in-process.js";
import { setAttribute } from "../helpers/ledger.js";
import { signPermit } from "../helpers/permit.js";
import { freshPayerKey } from "../helpers/x402.js";

const info = inject("devInfo");
const base = inject("baseUrl");
const usdc = info.usdcAddress as Hex;
const chain = createPublicClient({ transport: http(info.rpcUrl) });
const USDC_EXTRA = parseAbi(["function approve(address spender, uint256 value) returns (bool)"]);

let lib: {
  pullIfLow: typeof import("../../lib/payments/auto-topup.js").pullIfLow;
  reconcileAutoTopups: typeof import("../../lib/payments/auto-topup-reconcile.js").reconcileAutoTopups;
  getAutoTopup: typeof import("../../lib/billing/auto-topup.js").getAutoTopup;
  claimPull: typeof import("../../lib/billing/auto-topup.js").claimPull;
  pullFailed: typeof import("../../lib/billing/auto-topup.js").pullFailed;
  checkLedger: typeof import("../../lib/billing/invariants.js").checkLedger;
  AUTH_CACHE_MS: number;
};

beforeAll(async () => {
  useSharedStackInProcess({
    X402_PAY_TO: info.payTo,
    X402_NETWORK: info.network,
    X402_ASSET: info.usdcAddress,
    X402_RPC_URL: info.rpcUrl,
    AUTO_TOPUP_PRIVATE_KEY: DEV_KEYS.topUp,
  });
  // Imported only now: lib/config.ts reads the environment once, as these modules load.
  const [payments, reconciling, billing, invariants, keys] = await Promise.all([
    import("../../lib/payments/auto-topup.js"),
    import("../../lib/payments/auto-topup-reconcile.js"),
    import("../../lib/billing/auto-topup.js"),
    import("../../lib/billing/invariants.js"),
    import("../../lib/billing/api-keys.js"),
  ]);
  lib = { ...payments, ...reconciling, ...billing, checkLedger: invariants.checkLedger, AUTH_CACHE_MS: keys.AUTH_CACHE_MS };
});

type View = {
  status: string;
  threshold_cents: number;
  amount_cents: number;
  monthly_cap_cents: number;
  payer: string;
  month_total_cents: number;
  in_flight: boolean;
  last_failure: { at: string; reason: string } | null;
  paused_reason: string | null;
} | null;
type Answer = { auto_topup: View; offered: boolean; spender: string; token: string; network: string; chainId: number; allowance_micro_usd: number | null };
type Usage = {
  balance_micro_usd: number;
  auto_topup_enabled: boolean;
  auto_topup: View;
  recent_usage: { kind: string; endpoint: string; amount_micro_usd: number; status: string; auto?: true; reason?: string }[];
};

let counter = 0;
async function account() {
  const res = await postJson("/api/v1/signup", { email: `auto-${Date.now()}-${counter++}@topup.test` }, {});
  const { api_key: key, account_id: id } = (await res.json()) as { api_key: string; account_id: string };
  return { key, id, auth: { authorization: `Bearer ${key}` } };
}
const call = (method: string, path: string, key: string, body?: unknown) =>
  fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
const usage = async (key: string) => (await (await call("GET", "/api/v1/usage", key)).json()) as Usage;
const offer = async (key: string) => (await (await call("GET", "/api/v1/auto-topup", key)).json()) as Answer;
const usdcOf = (address: string) => chain.readContract({ address: usdc, abi: erc20Abi, functionName: "balanceOf", args: [address as Hex] });
const charge = (key: string) =>
  postJson("/api/v1/html-to-screenshot", { html: `<p>${counter++}</p>`, width: 320, height: 100, deviceScaleFactor: 1 }, { authorization: `Bearer ${key}` });
const autoEntries = (report: Usage) => report.recent_usage.filter((e) => e.auto);

const permit = (key: Hex, spender: string, value: bigint, options: { deadline?: number; signer?: Hex } = {}) => signPermit(info, key, spender, value, options);

/** Waits until `check` holds (the pull runs beside the request), up to a wide bound. */
async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean, what: string): Promise<T> {
  const until = Date.now() + 60_000;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > until) throw new Error(`not within 60 s: ${what} (last: ${JSON.stringify(value)})`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** A payer with USDC and gas of its own, and an account configured to pull from it. */
async function configured(settings: { threshold_cents: number; amount_cents: number; monthly_cap_cents: number }, usdcUnits = 50_000_000n) {
  const payerKey = await freshPayerKey(info, usdcUnits);
  const payer = privateKeyToAccount(payerKey).address;
  const { key, id, auth } = await account();
  const { spender } = await offer(key);
  const res = await call("PUT", "/api/v1/auto-topup", key, { ...settings, payer, permit: await permit(payerKey, spender, 20_000_000n) });
  expect(res.status, await res.clone().text()).toBe(200);
  // A key's account (with its switch) is trusted for AUTH_CACHE_MS where it was read: charges see the switch after that.
  await new Promise((resolve) => setTimeout(resolve, lib.AUTH_CACHE_MS + 500));
  return { payerKey, payer, key, id, auth, spender, answer: (await res.json()) as Answer };
}

describe("auto-topup", () => {
  it("offers the top-up address, token and network; nothing is configured at first; the bare switch cannot be turned on", async () => {
    const { key } = await account();
    const answer = await offer(key);
    expect(answer).toEqual({
      auto_topup: null,
      offered: true,
      spender: privateKeyToAccount(DEV_KEYS.topUp).address,
      token: usdc,
      tokenName: "USD Coin",
      tokenVersion: "2",
      network: info.network,
      chainId: info.chainId,
      allowance_micro_usd: null,
    });
    const on = await call("PATCH", "/api/v1/account", key, { auto_topup_enabled: true });
    expect(on.status).toBe(400);
    expect(((await on.json()) as ErrorBody).error.message).toMatch(/PUT \/api\/v1\/auto-topup/);
    expect((await usage(key)).auto_topup_enabled).toBe(false);
  });

  it("a permit through the API, then charges crossing the threshold: exactly one pull, credited once", async () => {
    // The bonus is 250,000 micro-USD: a threshold of 25 cents is crossed by the first charge.
    const { key, payer, answer } = await configured({ threshold_cents: 25, amount_cents: 500, monthly_cap_cents: 1000 });
    expect(answer.auto_topup).toMatchObject({ status: "active", threshold_cents: 25, amount_cents: 500, monthly_cap_cents: 1000, payer, month_total_cents: 0 });
    expect(answer.allowance_micro_usd).toBe(20_000_000);
    expect((await usage(key)).auto_topup_enabled).toBe(true);
    const [payerBefore, payToBefore] = await Promise.all([usdcOf(payer), usdcOf(info.payTo)]);

    const charged = Date.now();
    const first = await charge(key);
    expect(first.status).toBe(200);
    const topped = await eventually(
      () => usage(key),
      (u) => u.balance_micro_usd === 245_000 + 5_000_000,
      "the balance topped up",
    );
    // Launched by the charge, not found by the reconciler's round a minute later (a pull takes a block here).
    expect(Date.now() - charged).toBeLessThan(30_000);
    expect(autoEntries(topped)).toEqual([expect.objectContaining({ kind: "topup", endpoint: "auto-topup", amount_micro_usd: 5_000_000, status: "credited" })]);
    expect(topped.auto_topup).toMatchObject({ month_total_cents: 500, in_flight: false, last_failure: null });
    expect(payerBefore - (await usdcOf(payer))).toBe(5_000_000n);
    expect((await usdcOf(info.payTo)) - payToBefore).toBeGreaterThanOrEqual(5_000_000n);
    // More charges above the threshold pull nothing more.
    expect((await charge(key)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(autoEntries(await usage(key))).toHaveLength(1);
    expect(payerBefore - (await usdcOf(payer))).toBe(5_000_000n);
  }, 120_000);

  it("twenty charges crossing at once: one pull", async () => {
    const { key, payer } = await configured({ threshold_cents: 25, amount_cents: 500, monthly_cap_cents: 5000 });
    const before = await usdcOf(payer);
    const answers = await Promise.all(Array.from({ length: 20 }, () => charge(key)));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    await eventually(
      () => usage(key),
      (u) => autoEntries(u).length > 0 && !u.auto_topup?.in_flight,
      "a pull credited",
    );
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const report = await usage(key);
    expect(autoEntries(report)).toHaveLength(1);
    expect(report.balance_micro_usd).toBe(250_000 - 20 * 5_000 + 5_000_000);
    expect(before - (await usdcOf(payer))).toBe(5_000_000n);
  }, 120_000);

  it("twenty pulls of one account at once (as twenty launches would run): one claim wins, one transfer", async () => {
    const { id, key, payer } = await configured({ threshold_cents: 25, amount_cents: 500, monthly_cap_cents: 5000 });
    // Its threshold raised above the balance (on the item and the account's switch alike), with no charge to launch a pull.
    await setAttribute("AUTOTOPUP", id, "threshold", 1_000_000);
    await setAttribute(`ACCT#${id}`, "ACCT", "autoTopupThreshold", 1_000_000);
    const before = await usdcOf(payer);
    const stale = (await lib.getAutoTopup(id))!;
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => lib.pullIfLow(id)));
    // One of them (or the stack's own reconciler, which may run meanwhile) made the pull.
    expect(outcomes.filter((o) => o !== "none").length).toBeLessThanOrEqual(1);
    const report = await eventually(
      () => usage(key),
      (u) => autoEntries(u).length === 1 && !u.auto_topup?.in_flight,
      "one pull",
    );
    expect(report.balance_micro_usd).toBe(250_000 + 5_000_000);
    expect(before - (await usdcOf(payer))).toBe(5_000_000n);
    // A pull decided on what was read before that credit (a slow launch) is never claimed.
    expect(await lib.claimPull(stale, "0")).toBeNull();
  }, 120_000);

  it("the monthly cap: pulls stop once the month's total would pass it", async () => {
    const { id, key, payer } = await configured({ threshold_cents: 100_000, amount_cents: 500, monthly_cap_cents: 1200 });
    await eventually(
      () => usage(key),
      (u) => autoEntries(u).length === 1 && !u.auto_topup?.in_flight,
      "the first pull",
    );
    expect(await lib.pullIfLow(id)).toBe("credited");
    // $10 of $12 pulled: another $5 would pass the cap.
    expect(await lib.pullIfLow(id)).toBe("none");
    const report = await usage(key);
    expect(autoEntries(report)).toHaveLength(2);
    expect(report.auto_topup).toMatchObject({ month_total_cents: 1000 });
    expect(report.balance_micro_usd).toBe(250_000 + 10_000_000);
    expect(await usdcOf(payer)).toBe(50_000_000n - 10_000_000n);
  }, 120_000);

  it("an allowance revoked: the failure recorded, no retry until the backoff, charges still answered; a third failure pauses it", async () => {
    const { id, key, payerKey, spender } = await configured({ threshold_cents: 25, amount_cents: 500, monthly_cap_cents: 5000 });
    // The payer revokes the allowance (with gas of its own).
    const payer = privateKeyToAccount(payerKey);
    await fetch(info.rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "anvil_setBalance", params: [payer.address, "0xDE0B6B3A7640000"] }),
    });
    const wallet = createWalletClient({ account: payer, transport: http(info.rpcUrl) });
    await chain.waitForTransactionReceipt({
      hash: await wallet.writeContract({ address: usdc, abi: USDC_EXTRA, functionName: "approve", args: [spender as Hex, 0n], chain: null }),
    });
    expect((await charge(key)).status).toBe(200);
    const failed = await eventually(
      () => usage(key),
      (u) => u.auto_topup?.last_failure !== null,
      "the failure recorded",
    );
    expect(failed.auto_topup!.last_failure!.reason).toMatch(/allowance \(0\.00 USDC\) is less than the top-up \(5\.00 USDC\)/);
    expect(autoEntries(failed)).toEqual([expect.objectContaining({ status: "failed", endpoint: "auto-topup", reason: expect.stringMatching(/allowance/) })]);
    expect(failed.auto_topup).toMatchObject({ status: "active", month_total_cents: 0, in_flight: false });
    // Within the backoff: more charges, more launches, no second attempt.
    for (let i = 0; i < 3; i++) expect((await charge(key)).status).toBe(200);
    expect(await lib.pullIfLow(id)).toBe("none");
    expect(autoEntries(await usage(key))).toHaveLength(1);
    // Past the backoff twice more: the third failure in a row pauses it, and the switch goes off
    // (the stack's own reconciler may make one of the attempts).
    for (let i = 0; i < 2; i++) {
      await setAttribute("AUTOTOPUP", id, "nextAttemptAt", 0);
      expect(["failed", "none"]).toContain(await lib.pullIfLow(id));
    }
    expect(autoEntries(await usage(key)).filter((e) => e.status === "failed")).toHaveLength(3);
    const paused = await usage(key);
    expect(paused.auto_topup).toMatchObject({ status: "paused", paused_reason: expect.stringMatching(/^Paused after 3 failed top-ups in a row/) });
    expect(paused.auto_topup_enabled).toBe(false);
    await setAttribute("AUTOTOPUP", id, "nextAttemptAt", 0);
    expect(await lib.pullIfLow(id)).toBe("none");
    // Turning it back on (after granting again) resumes it with its settings.
    const resumed = await call("PATCH", "/api/v1/account", key, { auto_topup_enabled: true });
    expect(((await resumed.json()) as Usage).auto_topup).toMatchObject({ status: "active", last_failure: expect.anything() });
    expect(((await (await call("DELETE", "/api/v1/auto-topup", key)).json()) as Answer).auto_topup).toBeNull();
    expect((await usage(key)).auto_topup_enabled).toBe(false);
  }, 120_000);

  it("a payer drained of USDC: the pull is refused before any transaction (no gas spent), recorded, and charges go on", async () => {
    const { id, key, payerKey } = await configured({ threshold_cents: 100_000, amount_cents: 500, monthly_cap_cents: 5000 }, 1_000_000n);
    // $1 of USDC for a $5 pull: the PUT's own launch already failed on it, or this one does.
    const outcome = await lib.pullIfLow(id);
    expect(["failed", "none"]).toContain(outcome);
    const report = await eventually(
      () => usage(key),
      (u) => u.auto_topup?.last_failure !== null,
      "the failure recorded",
    );
    expect(report.auto_topup!.last_failure!.reason).toBe("the payer holds 1.00 USDC, less than the top-up (5.00 USDC)");
    expect(report.auto_topup).toMatchObject({ in_flight: false, month_total_cents: 0 });
    expect(autoEntries(report)).toEqual([expect.objectContaining({ status: "failed", amount_micro_usd: 5_000_000 })]);
    // Nothing was sent from the top-up address for it: the payer still holds its dollar.
    expect(await usdcOf(privateKeyToAccount(payerKey).address)).toBe(1_000_000n);
    expect((await charge(key)).status).toBe(200);
  }, 120_000);

  it("a pull sent and the process killed before it was noted: the reconciler finds the transfer and credits it once", async () => {
    const { id, key, payer } = await configured({ threshold_cents: 25, amount_cents: 500, monthly_cap_cents: 5000 });
    // What a pull does up to the moment it dies: claim, then send, and nothing more.
    const current = (await lib.getAutoTopup(id))!;
    const block = await chain.getBlockNumber();
    const pull = await lib.claimPull(current, String(block));
    expect(pull).not.toBeNull();
    const topUp = createWalletClient({ account: privateKeyToAccount(DEV_KEYS.topUp), transport: http(info.rpcUrl) });
    const hash = await topUp.writeContract({
      address: usdc,
      abi: parseAbi(["function transferFrom(address from, address to, uint256 value) returns (bool)"]),
      functionName: "transferFrom",
      args: [payer, info.payTo as Hex, 5_000_000n],
      chain: null,
    });
    await chain.waitForTransactionReceipt({ hash });
    // Claimed longer ago than a live pull takes to note its transaction.
    await setAttribute("AUTOTOPUP", id, "inFlight", { ...pull!, startedAt: new Date(Date.now() - 5 * 60_000).toISOString() });
    const now = Date.now();
    // Twice: the second finds nothing to do (the stack's own reconciler may have been first).
    await lib.reconcileAutoTopups(now);
    await lib.reconcileAutoTopups(now);
    const report = await usage(key);
    expect(autoEntries(report)).toEqual([expect.objectContaining({ status: "credited", amount_micro_usd: 5_000_000 })]);
    expect(report.balance_micro_usd).toBe(250_000 + 5_000_000);
    expect(report.auto_topup).toMatchObject({ in_flight: false, month_total_cents: 500 });
    // The ledger's invariants hold for it (the credit names its transfer, once).
    const { problems } = await lib.checkLedger(Date.now(), 120_000);
    expect(problems.filter((p) => p.includes(id) || p.includes(hash))).toEqual([]);
  }, 120_000);

  it("a transfer that is never mined: the customer is told it is stuck, and no other pull is made while it is followed", async () => {
    const { id, key } = await configured({ threshold_cents: 25, amount_cents: 500, monthly_cap_cents: 5000 });
    const current = (await lib.getAutoTopup(id))!;
    const pull = (await lib.claimPull(current, String(await chain.getBlockNumber())))!;
    // Sent eleven minutes ago, and nowhere on chain since (a transaction the network dropped).
    const transaction = `0x${"5e".repeat(32)}`;
    await setAttribute("AUTOTOPUP", id, "inFlight", { ...pull, transaction, startedAt: new Date(Date.now() - 11 * 60_000).toISOString() });
    await lib.reconcileAutoTopups(Date.now());
    const report = await usage(key);
    expect(report.auto_topup).toMatchObject({ status: "active", in_flight: true, month_total_cents: 500 });
    expect(report.auto_topup!.last_failure!.reason).toBe(
      `the transfer ${transaction} is not mined after 10 minutes; it is still followed, and no other pull is made meanwhile`,
    );
    expect(await lib.pullIfLow(id)).toBe("none");
    expect(autoEntries(report)).toEqual([]);
    // Closed here (as an operator would, once sure it will never be mined), so the ledger stays sound.
    expect(await lib.pullFailed((await lib.getAutoTopup(id))!, pull, "closed by the test")).toBe(true);
    expect((await usage(key)).auto_topup).toMatchObject({ in_flight: false, month_total_cents: 0 });
  }, 120_000);

  it("npm run pay -- --auto-topup sets it up from a script (the demo payer signs the permit), and --auto-topup off stops it", async () => {
    const { execFileSync } = await import("node:child_process");
    const { key } = await account();
    const pay = (...args: string[]) =>
      execFileSync(process.execPath, ["--import", "tsx", "dev/pay-cli.ts", ...args, "--key", key], {
        env: { ...process.env, LOCAL_DIR: inject("localDir") },
        encoding: "utf8",
      });
    // A threshold of 0: nothing is pulled from the demo payer, which other tests pay from.
    const on = pay("--auto-topup", "--threshold", "0", "--amount", "500", "--cap", "1000");
    const payer = privateKeyToAccount(info.payerPrivateKey as Hex).address;
    expect(on).toBe(`auto-topup is on: $5.00 from ${payer} whenever the balance is below $0.00, at most $10.00 a month; allowance $120.00\n`);
    expect((await offer(key)).auto_topup).toMatchObject({ status: "active", threshold_cents: 0, amount_cents: 500, monthly_cap_cents: 1000, payer });
    expect(pay("--auto-topup", "off")).toMatch(/^auto-topup is off/);
    expect((await offer(key)).auto_topup).toBeNull();
  }, 60_000);

  it("refuses an expired permit, a forged one, and one not signed by the payer, with a clear 400 and nothing configured", async () => {
    const payerKey = await freshPayerKey(info, 1_000_000n);
    const payer = privateKeyToAccount(payerKey).address;
    const { key } = await account();
    const { spender } = await offer(key);
    const settings = { threshold_cents: 100, amount_cents: 500, monthly_cap_cents: 1000, payer };
    const refused = async (body: unknown, pattern: RegExp) => {
      const res = await call("PUT", "/api/v1/auto-topup", key, body);
      expect(res.status).toBe(400);
      const { error } = (await res.json()) as ErrorBody;
      expect(error.code).toBe("INVALID_PARAMS");
      expect(error.message).toMatch(pattern);
    };
    await refused(
      { ...settings, permit: await permit(payerKey, spender, 20_000_000n, { deadline: Math.floor(Date.now() / 1000) - 10 }) },
      /deadline has passed/,
    );
    // Signed by someone else for this payer, and a signature of random bytes.
    await refused({ ...settings, permit: await permit(payerKey, spender, 20_000_000n, { signer: DEV_KEYS.deployer }) }, /not signed by payer/);
    await refused(
      { ...settings, permit: { value: "20000000", deadline: Math.floor(Date.now() / 1000) + 3600, signature: `0x${"ab".repeat(65)}` } },
      /not signed by payer|not a valid signature/,
    );
    // A valid permit of another address, sent as this payer's.
    const other = await freshPayerKey(info, 1_000_000n);
    await refused({ ...settings, permit: await permit(other, spender, 20_000_000n) }, /not signed by payer/);
    // No permit, no allowance.
    await refused(settings, /allowance .* is 0 .*less than amount_cents/);
    await refused({ ...settings, monthly_cap_cents: 400 }, /monthly_cap_cents/);
    await refused({ ...settings, payer: "0x123" }, /payer: must be an address/);
    expect((await offer(key)).auto_topup).toBeNull();
    expect((await usage(key)).auto_topup_enabled).toBe(false);
  }, 120_000);
});
