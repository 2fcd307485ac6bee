// Auto-topup on the local chain (anvil with Circle's USDC): a permit granted through the API, charges
// crossing the threshold, the pull sent by the top-up key and credited once; the cap, failures and
// their backoff, a crash between sending and recording. The API through the shared stack (which
// launches pulls in its own process, as `npm run dev` does); the pull and the reconciler's round
// also in this process against the same table and chain, to drive the cases a request cannot.

import { createPublicClient, createWalletClient, defineChain, encodeFunctionData, erc20Abi, type Hex, http, keccak256, parseAbi } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { DEV_KEYS } from "../../dev/chain.js";
import { admin } from "../../dev/harness/dev-process.js";
import { type ErrorBody, postJson } from "../helpers/api.js";
import { useSharedStackInProcess } from "../helpers/in-process.js";
import { getItem, putItem, setAttribute } from "../helpers/ledger.js";
import { signAuthorization, signPermit } from "../helpers/permit.js";
import { freshPayerKey } from "../helpers/x402.js";

const info = inject("devInfo");
const base = inject("baseUrl");
const usdc = info.usdcAddress as Hex;
const chain = createPublicClient({ transport: http(info.rpcUrl) });
const USDC_EXTRA = parseAbi([
  "function approve(address spender, uint256 value) returns (bool)",
  "function nonces(address owner) view returns (uint256)",
  "function transferFrom(address from, address to, uint256 value) returns (bool)",
]);
const localChain = defineChain({
  id: info.chainId,
  name: "local",
  nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
  rpcUrls: { default: { http: [info.rpcUrl] } },
});
/** The top-up address's own wallet: what a pull signs with, to play a pull up to the moment its process dies. */
const topUp = createWalletClient({ account: privateKeyToAccount(DEV_KEYS.topUp), chain: localChain, transport: http(info.rpcUrl) });

let lib: {
  pullIfLow: typeof import("../../lib/payments/auto-topup.js").pullIfLow;
  reconcileAutoTopups: typeof import("../../lib/payments/auto-topup-reconcile.js").reconcileAutoTopups;
  getAutoTopup: typeof import("../../lib/billing/auto-topup.js").getAutoTopup;
  claimPull: typeof import("../../lib/billing/auto-topup.js").claimPull;
  pullFailed: typeof import("../../lib/billing/auto-topup.js").pullFailed;
  notePullSent: typeof import("../../lib/billing/auto-topup.js").notePullSent;
  settlePull: typeof import("../../lib/payments/auto-topup.js").settlePull;
  checkLedger: typeof import("../../dev/ledger-invariants.js").checkLedger;
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
    import("../../dev/ledger-invariants.js"),
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
type Answer = {
  auto_topup: View;
  offered: boolean;
  account_id: string;
  spender: string;
  token: string;
  network: string;
  chainId: number;
  allowance_micro_usd: number | null;
};
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
const nonceOf = (address: string) => chain.readContract({ address: usdc, abi: USDC_EXTRA, functionName: "nonces", args: [address as Hex] });
const allowanceOf = (address: string) =>
  chain.readContract({ address: usdc, abi: erc20Abi, functionName: "allowance", args: [address as Hex, topUp.account.address] });
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

/** A payer with USDC (or the one of `payerKey`), and an account configured to pull from it by a permit. */
async function configured(settings: { threshold_cents: number; amount_cents: number; monthly_cap_cents: number }, usdcUnits = 50_000_000n, payerKey?: Hex) {
  payerKey ??= await freshPayerKey(info, usdcUnits);
  const payer = privateKeyToAccount(payerKey).address;
  const { key, id, auth } = await account();
  const { spender } = await offer(key);
  const res = await call("PUT", "/api/v1/auto-topup", key, { ...settings, payer, permit: await permit(payerKey, spender, 20_000_000n) });
  expect(res.status, await res.clone().text()).toBe(200);
  // A key's account (with its switch) is trusted for AUTH_CACHE_MS where it was read: charges see the switch after that.
  await new Promise((resolve) => setTimeout(resolve, lib.AUTH_CACHE_MS + 500));
  return { payerKey, payer, key, id, auth, spender, answer: (await res.json()) as Answer };
}

/** Gives `address` gas of its own (a payer that approves by itself). */
const fund = (address: string) =>
  fetch(info.rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "anvil_setBalance", params: [address, "0xDE0B6B3A7640000"] }),
  });

/** The payer approves the top-up address itself, with gas of its own. */
async function approve(payerKey: Hex, value: bigint) {
  const payer = privateKeyToAccount(payerKey);
  await fund(payer.address);
  const wallet = createWalletClient({ account: payer, transport: http(info.rpcUrl) });
  await chain.waitForTransactionReceipt({
    hash: await wallet.writeContract({ address: usdc, abi: USDC_EXTRA, functionName: "approve", args: [topUp.account.address, value], chain: null }),
  });
}

/**
 * What a pull does up to the moment its process dies: claims the pull, signs its transfer, notes the
 * hash and nonce, and (when `broadcast`) sends it and waits for it to be mined; nothing more.
 */
async function pullThenDie(id: string, payer: Hex, broadcast: boolean) {
  const pull = (await lib.claimPull((await lib.getAutoTopup(id))!))!;
  expect(pull).not.toBeNull();
  for (let attempt = 0; ; attempt++) {
    const prepared = await topUp.prepareTransactionRequest({
      to: usdc,
      data: encodeFunctionData({ abi: USDC_EXTRA, functionName: "transferFrom", args: [payer, info.payTo as Hex, BigInt(pull.amount)] }),
    });
    const serializedTransaction = await topUp.signTransaction(prepared);
    const hash = keccak256(serializedTransaction);
    await lib.notePullSent(id, pull, hash, prepared.nonce);
    if (!broadcast) return { pull, hash };
    try {
      await chain.waitForTransactionReceipt({ hash: await chain.sendRawTransaction({ serializedTransaction }) });
      return { pull, hash };
    } catch (error) {
      // The stack's own pulls share the top-up address: its nonce was taken meanwhile; sign again.
      if (attempt >= 3) throw error;
    }
  }
}

describe("auto-topup", () => {
  it("offers the top-up address, token and network; nothing is configured at first; the bare switch cannot be turned on", async () => {
    const { key } = await account();
    const answer = await offer(key);
    expect(answer).toEqual({
      auto_topup: null,
      offered: true,
      account_id: expect.stringMatching(/./),
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
      // With its entry: the report's reads are not one snapshot.
      (u) => u.balance_micro_usd === 245_000 + 5_000_000 && autoEntries(u).length > 0,
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
    const { key, id, payer } = await configured({ threshold_cents: 25, amount_cents: 500, monthly_cap_cents: 5000 });
    // Twenty renders at once: more than an account's default renders in flight.
    admin(inject("localDir"), "limit", id, "100", "100");
    await new Promise((resolve) => setTimeout(resolve, lib.AUTH_CACHE_MS + 500));
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
    expect(await lib.claimPull(stale)).toBeNull();
  }, 120_000);

  it("the monthly cap: pulls stop once the month's total would pass it", async () => {
    const { id, key, payer } = await configured({ threshold_cents: 100_000, amount_cents: 500, monthly_cap_cents: 1200 });
    const first = await eventually(
      () => usage(key),
      (u) => autoEntries(u).length >= 1 && !u.auto_topup?.in_flight,
      "the first pull",
    );
    // The balance is still below the threshold: the second pull is this call's, or the stack's
    // reconciler's (its one-minute round pulls any account still low) when that came first.
    if (autoEntries(first).length === 1) expect(["credited", "none"]).toContain(await lib.pullIfLow(id));
    await eventually(
      () => usage(key),
      (u) => autoEntries(u).length === 2 && !u.auto_topup?.in_flight,
      "the second pull",
    );
    // $10 of $12 pulled: another $5 would pass the cap, whoever asks.
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
      (u) => u.auto_topup?.last_failure !== null && autoEntries(u).length > 0,
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
    // $1 of USDC for a $5 pull: a permit would not be submitted for it, so the payer approves by
    // itself and proves the wallet with an authorization naming the account.
    const payerKey = await freshPayerKey(info, 1_000_000n);
    const payer = privateKeyToAccount(payerKey).address;
    await approve(payerKey, 20_000_000n);
    const { key, id } = await account();
    const { spender } = await offer(key);
    const res = await call("PUT", "/api/v1/auto-topup", key, {
      threshold_cents: 100_000,
      amount_cents: 500,
      monthly_cap_cents: 5000,
      payer,
      authorization: await signAuthorization(info, payerKey, id, spender),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    // The PUT's own launch already failed on it, or this one does.
    const outcome = await lib.pullIfLow(id);
    expect(["failed", "none"]).toContain(outcome);
    // The report's reads are not one snapshot: both the failure and its entry, once the pull has failed.
    const report = await eventually(
      () => usage(key),
      (u) => u.auto_topup?.last_failure !== null && autoEntries(u).length > 0,
      "the failure recorded",
    );
    expect(report.auto_topup!.last_failure!.reason).toBe("the payer holds 1.00 USDC, less than the top-up (5.00 USDC)");
    expect(report.auto_topup).toMatchObject({ in_flight: false, month_total_cents: 0 });
    expect(autoEntries(report)).toEqual([expect.objectContaining({ status: "failed", amount_micro_usd: 5_000_000 })]);
    // Nothing was sent from the top-up address for it: the payer still holds its dollar.
    expect(await usdcOf(payer)).toBe(1_000_000n);
    expect((await charge(key)).status).toBe(200);
  }, 120_000);

  it("a pull sent and its process killed before crediting: the reconciler credits its noted transfer once, and says so once", async () => {
    // A threshold of 0: no launch pulls for it; the pull here is the test's.
    const { id, key, payer } = await configured({ threshold_cents: 0, amount_cents: 500, monthly_cap_cents: 5000 });
    const { pull, hash } = await pullThenDie(id, payer, true);
    // Twice: the second finds nothing to do (the stack's own reconciler may have been first).
    await lib.reconcileAutoTopups(Date.now());
    await lib.reconcileAutoTopups(Date.now());
    const report = await usage(key);
    expect(autoEntries(report)).toEqual([expect.objectContaining({ status: "credited", amount_micro_usd: 5_000_000 })]);
    expect(report.balance_micro_usd).toBe(250_000 + 5_000_000);
    expect(report.auto_topup).toMatchObject({ in_flight: false, month_total_cents: 500 });
    expect(await getItem(`SETTLE#${hash}`, "SETTLE")).toMatchObject({ accountId: id, requestId: pull.pullId });
    // Settling it again credits nothing, and says so.
    expect(await lib.settlePull((await lib.getAutoTopup(id))!, pull, hash, 0)).toBe("none");
    expect((await usage(key)).balance_micro_usd).toBe(250_000 + 5_000_000);
    const { problems } = await lib.checkLedger(Date.now(), 120_000);
    expect(problems.filter((p) => p.includes(id) || p.includes(hash))).toEqual([]);
  }, 120_000);

  it("a pull noted and its process killed before broadcasting: closed as failed, its amount given back, and its transaction never lands", async () => {
    const { id, key, payer } = await configured({ threshold_cents: 0, amount_cents: 500, monthly_cap_cents: 5000 });
    const before = await usdcOf(payer);
    const { pull, hash } = await pullThenDie(id, payer, false);
    // Young, it is left to its pull.
    await lib.reconcileAutoTopups(Date.now());
    expect((await usage(key)).auto_topup).toMatchObject({ in_flight: true, month_total_cents: 500 });
    // Claimed longer ago than a live pull takes to broadcast.
    await setAttribute("AUTOTOPUP", id, "inFlight", {
      ...pull,
      transaction: hash,
      nonce: (await lib.getAutoTopup(id))!.inFlight!.nonce,
      startedAt: new Date(Date.now() - 5 * 60_000).toISOString(),
    });
    await lib.reconcileAutoTopups(Date.now());
    const report = await usage(key);
    expect(report.auto_topup).toMatchObject({ in_flight: false, month_total_cents: 0 });
    expect(report.auto_topup!.last_failure!.reason).toBe(`the transfer ${hash} never reached the chain (the pull was interrupted)`);
    expect(autoEntries(report)).toEqual([expect.objectContaining({ status: "failed" })]);
    expect(report.balance_micro_usd).toBe(250_000);
    expect(await usdcOf(payer)).toBe(before);
  }, 120_000);

  it("two accounts that held one payer in turn: each lost transfer is credited to its own pull, never the other's", async () => {
    const settings = { threshold_cents: 0, amount_cents: 500, monthly_cap_cents: 5000 };
    const first = await configured(settings);
    const a = await pullThenDie(first.id, first.payer, true);
    // The first lets the payer go; the second proves it (the allowance is there) and binds it.
    expect((await call("DELETE", "/api/v1/auto-topup", first.key)).status).toBe(200);
    const second = await account();
    const put = await call("PUT", "/api/v1/auto-topup", second.key, {
      ...settings,
      payer: first.payer,
      authorization: await signAuthorization(info, first.payerKey, second.id, first.spender),
    });
    expect(put.status, await put.clone().text()).toBe(200);
    const b = await pullThenDie(second.id, first.payer, true);
    // Same payer, same amount, same sender: only the noted hash tells them apart.
    await lib.reconcileAutoTopups(Date.now());
    await lib.reconcileAutoTopups(Date.now());
    expect(await getItem(`SETTLE#${a.hash}`, "SETTLE")).toMatchObject({ accountId: first.id, requestId: a.pull.pullId });
    expect(await getItem(`SETTLE#${b.hash}`, "SETTLE")).toMatchObject({ accountId: second.id, requestId: b.pull.pullId });
    for (const key of [first.key, second.key]) {
      const report = await usage(key);
      expect(report.balance_micro_usd).toBe(250_000 + 5_000_000);
      expect(autoEntries(report)).toEqual([expect.objectContaining({ status: "credited", amount_micro_usd: 5_000_000 })]);
    }
    expect((await lib.getAutoTopup(first.id))!.inFlight).toBeNull();
    expect((await lib.getAutoTopup(second.id))!.inFlight).toBeNull();
  }, 120_000);

  it("npm run pay -- --auto-topup sets it up from a script (the demo payer signs the permit), and --auto-topup off stops it", async () => {
    const { execFileSync } = await import("node:child_process");
    const { key } = await account();
    // A payer of its own (PAY_PRIVATE_KEY): the demo payer may be bound to the dashboard test's account meanwhile.
    const payerKey = await freshPayerKey(info, 10_000_000n);
    const pay = (...args: string[]) =>
      execFileSync(process.execPath, ["--import", "tsx", "dev/pay-cli.ts", ...args, "--key", key], {
        env: { ...process.env, LOCAL_DIR: inject("localDir"), PAY_PRIVATE_KEY: payerKey },
        encoding: "utf8",
      });
    const on = pay("--auto-topup", "--threshold", "0", "--amount", "500", "--cap", "1000");
    const payer = privateKeyToAccount(payerKey).address;
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
    // A permit is a proof of the moment: one that lives more than a day would be a standing grant.
    await refused(
      { ...settings, permit: await permit(payerKey, spender, 20_000_000n, { deadline: Math.floor(Date.now() / 1000) + 86_400 + 600 }) },
      /^Invalid request: permit: its deadline is more than a day away; sign one that ends sooner$/,
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
    // No proof at all.
    await refused(settings, /payer: prove the wallet is yours/);
    // Authorizations: expired, too far ahead, signed by another, or naming another account.
    const { account_id: id } = await offer(key);
    const now = Math.floor(Date.now() / 1000);
    await refused(
      { ...settings, authorization: await signAuthorization(info, payerKey, id, spender, { deadline: now - 10 }) },
      /authorization: its deadline has passed/,
    );
    await refused({ ...settings, authorization: await signAuthorization(info, payerKey, id, spender, { deadline: now + 3 * 86_400 }) }, /more than a day away/);
    await refused(
      { ...settings, authorization: await signAuthorization(info, payerKey, id, spender, { signer: DEV_KEYS.deployer }) },
      /authorization: it is not signed by payer/,
    );
    await refused(
      { ...settings, authorization: await signAuthorization(info, payerKey, "another-account", spender) },
      /authorization: it is not signed by payer/,
    );
    await refused(
      { ...settings, authorization: await signAuthorization(info, payerKey, id, spender), permit: await permit(payerKey, spender, 20_000_000n) },
      /either permit or authorization/,
    );
    // Proven, but no allowance.
    await refused({ ...settings, authorization: await signAuthorization(info, payerKey, id, spender) }, /allowance .* is 0 .*less than amount_cents/);
    await refused({ ...settings, monthly_cap_cents: 400 }, /monthly_cap_cents/);
    await refused({ ...settings, payer: "0x123" }, /payer: must be an address/);
    expect((await offer(key)).auto_topup).toBeNull();
    expect((await usage(key)).auto_topup_enabled).toBe(false);
  }, 120_000);
});

describe("auto-topup: a payer belongs to one account", () => {
  const settings = { threshold_cents: 100_000, amount_cents: 500, monthly_cap_cents: 1000 };

  it("another account naming a payer that approved the top-up address for the first is refused, with or without proof, and the wallet never moves", async () => {
    const first = await configured({ threshold_cents: 0, amount_cents: 500, monthly_cap_cents: 1000 });
    const before = await usdcOf(first.payer);
    expect(await allowanceOf(first.payer)).toBe(20_000_000n);
    const second = await account();
    const put = (body: Record<string, unknown>) => call("PUT", "/api/v1/auto-topup", second.key, { ...settings, payer: first.payer, ...body });
    // The allowance the first account's permit granted is there for anyone to see; it proves nothing.
    const bare = await put({});
    expect(bare.status).toBe(400);
    expect(((await bare.json()) as ErrorBody).error.message).toMatch(/prove the wallet is yours/);
    // An authorization the payer signed for the first account, replayed by the second.
    const replayed = await put({ authorization: await signAuthorization(info, first.payerKey, first.id, first.spender) });
    expect(replayed.status).toBe(400);
    // The payer's own proof for the second account (one owner, two accounts): still the first's.
    for (const proof of [
      { authorization: await signAuthorization(info, first.payerKey, second.id, first.spender) },
      { permit: await permit(first.payerKey, first.spender, 20_000_000n) },
    ]) {
      const taken = await put(proof);
      expect(taken.status).toBe(409);
      expect(((await taken.json()) as ErrorBody).error).toEqual({
        code: "PAYER_TAKEN",
        message: `The wallet ${first.payer} is already the auto-topup payer of another account; that account must turn auto-topup off (DELETE /api/v1/auto-topup) before another may use it.`,
      });
    }
    expect((await offer(second.key)).auto_topup).toBeNull();
    expect((await usage(second.key)).auto_topup_enabled).toBe(false);

    // A configuration written before payers were bound (as an older table holds): paused at its
    // first pull, with a reason, and nothing moves.
    await putItem({
      pk: "AUTOTOPUP",
      sk: second.id,
      accountId: second.id,
      threshold: 100_000_000,
      amount: 5_000_000,
      monthlyCap: 10_000_000,
      payer: first.payer,
      status: "active",
      pausedReason: null,
      failures: 0,
      nextAttemptAt: 0,
      lastFailure: null,
      month: new Date().toISOString().slice(0, 7),
      monthTotal: 0,
      inFlight: null,
      updatedAt: new Date().toISOString(),
      version: 1,
    });
    expect(await lib.pullIfLow(second.id)).toBe("none");
    expect((await offer(second.key)).auto_topup).toMatchObject({ status: "paused", paused_reason: expect.stringMatching(/does not hold the wallet/) });
    expect(await lib.reconcileAutoTopups(Date.now()).then(() => usdcOf(first.payer))).toBe(before);

    // Once the first lets it go, the second proves it and holds it; the first cannot switch itself back on.
    expect((await call("DELETE", "/api/v1/auto-topup", first.key)).status).toBe(200);
    const bound = await put({ threshold_cents: 0, authorization: await signAuthorization(info, first.payerKey, second.id, first.spender) });
    expect(bound.status, await bound.clone().text()).toBe(200);
    expect(((await bound.json()) as Answer).auto_topup).toMatchObject({ status: "active", payer: first.payer });
    const back = await call("PATCH", "/api/v1/account", first.key, { auto_topup_enabled: true });
    expect(back.status).toBe(409);
    expect(((await back.json()) as ErrorBody).error.code).toBe("PAYER_TAKEN");
    expect(await usdcOf(first.payer)).toBe(before);
    // Changing to another payer lets the old one go.
    const other = await freshPayerKey(info, 10_000_000n);
    const moved = await call("PUT", "/api/v1/auto-topup", second.key, {
      ...settings,
      threshold_cents: 0,
      payer: privateKeyToAccount(other).address,
      permit: await permit(other, first.spender, 20_000_000n),
    });
    expect(moved.status, await moved.clone().text()).toBe(200);
    expect(await getItem(`PAYER#${first.payer.toLowerCase()}`, "PAYER")).toBeUndefined();
  }, 120_000);

  it("a permit whose allowance already exists proves the wallet once: leaked and replayed after its owner lets the wallet go, it binds nothing", async () => {
    const owner = await configured({ threshold_cents: 0, amount_cents: 500, monthly_cap_cents: 1000 });
    // Signed against the unused nonce, for the allowance that is already there: never submitted, so its nonce stays unused on chain.
    const leaked = await permit(owner.payerKey, owner.spender, 20_000_000n);
    const nonce = await nonceOf(owner.payer);
    const reproved = await call("PUT", "/api/v1/auto-topup", owner.key, { ...settings, threshold_cents: 0, payer: owner.payer, permit: leaked });
    expect(reproved.status, await reproved.clone().text()).toBe(200);
    expect(await nonceOf(owner.payer)).toBe(nonce);
    // The same permit again, from its own account (a retry): proven once is proven.
    const retried = await call("PUT", "/api/v1/auto-topup", owner.key, { ...settings, threshold_cents: 0, payer: owner.payer, permit: leaked });
    expect(retried.status).toBe(400);
    expect(((await retried.json()) as ErrorBody).error.message).toBe("Invalid request: permit: it was already used to prove this wallet; sign a new one");

    // The owner lets the wallet go; whoever saw the permit tries to bind it to their account.
    expect((await call("DELETE", "/api/v1/auto-topup", owner.key)).status).toBe(200);
    expect(await getItem(`PAYER#${owner.payer.toLowerCase()}`, "PAYER")).toBeUndefined();
    const thief = await account();
    const stolen = await call("PUT", "/api/v1/auto-topup", thief.key, { ...settings, threshold_cents: 0, payer: owner.payer, permit: leaked });
    expect(stolen.status).toBe(400);
    expect(((await stolen.json()) as ErrorBody).error).toEqual({
      code: "INVALID_PARAMS",
      message: "Invalid request: permit: it was already used to prove this wallet; sign a new one",
    });
    expect(await getItem(`PAYER#${owner.payer.toLowerCase()}`, "PAYER")).toBeUndefined();
    expect((await offer(thief.key)).auto_topup).toBeNull();
    expect((await usage(thief.key)).auto_topup_enabled).toBe(false);
    // A fresh permit of the owner's still proves it, for the owner.
    const fresh = await call("PUT", "/api/v1/auto-topup", owner.key, {
      ...settings,
      threshold_cents: 0,
      payer: owner.payer,
      // Another deadline: another permit, even within the same second.
      permit: await permit(owner.payerKey, owner.spender, 20_000_000n, { deadline: Math.floor(Date.now() / 1000) + 7_200 }),
    });
    expect(fresh.status, await fresh.clone().text()).toBe(200);
  }, 120_000);

  it("a permit spends the operator's gas only when it changes something: not from an empty wallet, not when the allowance covers it, at most 3 a day", async () => {
    // A wallet that holds no USDC: its valid permit is refused and never sent.
    const emptyKey = generatePrivateKey();
    const empty = privateKeyToAccount(emptyKey).address;
    const { key } = await account();
    const { spender } = await offer(key);
    const refusedEmpty = await call("PUT", "/api/v1/auto-topup", key, { ...settings, payer: empty, permit: await permit(emptyKey, spender, 20_000_000n) });
    expect(refusedEmpty.status).toBe(400);
    expect(((await refusedEmpty.json()) as ErrorBody).error.message).toBe(
      `Invalid request: permit: payer ${empty} holds 0.00 USDC, less than one top-up (5.00 USDC); the permit was not submitted`,
    );
    expect(await nonceOf(empty)).toBe(0n);
    expect(await allowanceOf(empty)).toBe(0n);

    // A funded payer: the first permit is submitted (its nonce spent), the same again only proves.
    const quiet = { threshold_cents: 0, amount_cents: 500, monthly_cap_cents: 1000 };
    const { key: funded, payerKey, payer } = await configured(quiet);
    expect(await nonceOf(payer)).toBe(1n);
    const again = (value: bigint) => permit(payerKey, spender, value).then((p) => call("PUT", "/api/v1/auto-topup", funded, { ...quiet, payer, permit: p }));
    expect((await again(20_000_000n)).status).toBe(200);
    expect(await nonceOf(payer)).toBe(1n);
    // Raising it is submitted, up to 3 a day; the fourth is refused and not sent.
    expect((await again(30_000_000n)).status).toBe(200);
    expect((await again(40_000_000n)).status).toBe(200);
    expect(await nonceOf(payer)).toBe(3n);
    const fourth = await again(50_000_000n);
    expect(fourth.status).toBe(429);
    expect(((await fourth.json()) as ErrorBody).error.code).toBe("RATE_LIMITED");
    expect(await nonceOf(payer)).toBe(3n);
    expect(await allowanceOf(payer)).toBe(40_000_000n);
  }, 120_000);
});
