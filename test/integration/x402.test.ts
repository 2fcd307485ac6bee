// x402 end to end: the real @x402/fetch client paying from the dev payer on the local chain (anvil
// + Circle's USDC), verified and settled by the in-process facilitator. No mocks.
import { x402Client } from "@x402/core/client";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { appendPaymentIdentifierToExtensions, declarePaymentIdentifierExtension } from "@x402/extensions/payment-identifier";
import { wrapFetchWithPayment } from "@x402/fetch";
import { erc20Abi, parseEventLogs } from "viem";
import { describe, expect, inject, it } from "vitest";
import { MAX_PRESENTATIONS } from "../../lib/payments/x402.js";
import type { ErrorBody, X402Body } from "../helpers/api.js";
import { getItem } from "../helpers/ledger.js";
import { decode, freshPayerKey, localPayer } from "../helpers/x402.js";

const info = inject("devInfo");
const base = inject("baseUrl");
const fixture = (path: string) => `${inject("fixtureUrl")}${path}`;
// A payer of this file's own: its balance is checked to the unit while other files pay too.
const { usdc, payer, client, chain, balanceOf, payingFetch, paymentFor } = localPayer(info, await freshPayerKey(info));

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${base}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });

describe("402 without Authorization", () => {
  it("quotes each operation's own price as x402 v2 (header) and v1 (body)", async () => {
    for (const [body, amount] of [
      [{ url: fixture("/simple") }, "5000"],
      [{ url: fixture("/simple"), style: "mockup" }, "10000"],
    ] as const) {
      const res = await post("/api/v1/screenshot", body);
      expect(res.status).toBe(402);
      const v2 = decode(res.headers.get("payment-required"));
      expect(v2).toMatchObject({ x402Version: 2, resource: { url: `${base}/api/v1/screenshot` } });
      expect(v2.accepts).toEqual([
        { scheme: "exact", network: "eip155:84532", asset: usdc, amount, payTo: info.payTo, maxTimeoutSeconds: 120, extra: { name: "USD Coin", version: "2" } },
      ]);
      // A valid x402 v1 PaymentRequired: `error` a string (strict v1 clients refuse anything else), our code beside it.
      const json = (await res.json()) as X402Body;
      expect(json.code).toBe("PAYMENT_REQUIRED");
      expect(json.error).toMatch(/^This request costs \$[\d.]+: pay with x402/);
      expect(json.x402Version).toBe(1);
      expect(json.accepts[0]).toMatchObject({
        scheme: "exact",
        network: "base-sepolia",
        maxAmountRequired: amount,
        payTo: info.payTo,
        asset: usdc,
        resource: `${base}/api/v1/screenshot`,
      });
    }
  });
});

describe("paying with @x402/fetch", () => {
  it("pays 5,000 for a screenshot, gets the PNG, and the USDC moves on chain", async () => {
    const { pay } = payingFetch();
    const before = await balanceOf(payer.address);
    const res = await pay(`${base}/api/v1/screenshot`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ url: fixture("/simple"), width: 320, deviceScaleFactor: 1 }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/png");
    const receipt = decode(res.headers.get("payment-response"));
    expect(receipt).toMatchObject({ success: true, network: "eip155:84532", payer: payer.address });
    expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await balanceOf(payer.address)).toBe(before - 5_000n);
    // To the pay-to address (whose balance other files' payments move too): the transfer itself.
    const logs = (await chain.getTransactionReceipt({ hash: receipt.transaction })).logs;
    const transfers = parseEventLogs({ abi: erc20Abi, eventName: "Transfer", logs });
    expect(transfers.map((t) => [t.args.from, t.args.to, t.args.value])).toEqual([[payer.address, info.payTo, 5_000n]]);
    // Recorded for audit: payer, amount, transaction, request id.
    expect(await getItem(`SETTLE#${receipt.transaction}`, "SETTLE")).toMatchObject({
      kind: "render",
      payer: payer.address,
      amount: 5_000,
      requestId: res.headers.get("x-request-id"),
    });
  });

  it("pays 10,000 for a mockup", async () => {
    const { pay } = payingFetch();
    const before = await balanceOf(payer.address);
    const res = await pay(`${base}/api/v1/html-to-screenshot`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ html: "<p>hi</p>", style: "mockup", width: 320, deviceScaleFactor: 1 }),
    });
    expect(res.status).toBe(200);
    expect(await balanceOf(payer.address)).toBe(before - 10_000n);
  });

  it("refuses a replayed payment and a screenshot-priced payment sent to a mockup", async () => {
    const { pay, sent } = payingFetch();
    const body = { url: fixture("/simple"), width: 320, deviceScaleFactor: 1 };
    expect(
      (await pay(`${base}/api/v1/screenshot`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })).status,
    ).toBe(200);
    const used = sent.at(-1)!;
    const before = await balanceOf(payer.address);
    const replay = await post("/api/v1/screenshot", body, { "payment-signature": used });
    expect(replay.status).toBe(402);
    expect(((await replay.json()) as X402Body).error).toMatch(/^Payment refused: /);
    const mockup = await post("/api/v1/screenshot", { ...body, style: "mockup" }, { "payment-signature": used });
    expect(mockup.status).toBe(402);
    expect(((await mockup.json()) as X402Body).error).toMatch(/^Payment refused: /);
    expect(await balanceOf(payer.address)).toBe(before);
  });

  it("one authorisation pays for one render, however it is re-serialised: five concurrent copies, one render, one transfer", async () => {
    const name = crypto.randomUUID();
    const body = { url: `${inject("fixtureUrl")}/zoo/counted?name=${name}`, width: 320, deviceScaleFactor: 1 };
    const payment = decode(await paymentFor(await post("/api/v1/screenshot", body)));
    const { authorization, signature } = payment.payload;
    const reversed = (value: Record<string, unknown>) => Object.fromEntries(Object.entries(value).reverse());
    const copies = [
      payment,
      // Keys in another order, at every level.
      reversed({ ...payment, payload: reversed({ signature, authorization: reversed(authorization) }) }),
      // An extra field.
      { ...payment, note: "hello", payload: { ...payment.payload, extra: 1 } },
      // The same hex in upper case (the signature still recovers the same signer).
      {
        ...payment,
        payload: {
          signature: `0x${signature.slice(2).toUpperCase()}`,
          authorization: { ...authorization, nonce: `0x${authorization.nonce.slice(2).toUpperCase()}` },
        },
      },
      // The payer's address in lower case.
      { ...payment, payload: { signature, authorization: { ...authorization, from: authorization.from.toLowerCase() } } },
    ];
    const before = await balanceOf(payer.address);
    const answers = await Promise.all(
      copies.map((copy) => post("/api/v1/screenshot", body, { "payment-signature": Buffer.from(JSON.stringify(copy)).toString("base64") })),
    );
    const statuses = answers.map((res) => res.status).sort();
    expect(statuses).toEqual([200, 402, 402, 402, 402]);
    const hits = (await (await fetch(`${inject("fixtureUrl")}/zoo/__hits?name=counted:${name}`)).json()) as number;
    expect(hits).toBe(1);
    expect(await balanceOf(payer.address)).toBe(before - 5_000n);
  });

  it("does not settle a payment for a render that fails", async () => {
    const { pay } = payingFetch();
    const before = await balanceOf(payer.address);
    const res = await pay(`${base}/api/v1/screenshot`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ url: fixture("/not-found") }),
    });
    expect(res.status).toBe(422);
    expect(res.headers.get("payment-response")).toBeNull();
    expect(await balanceOf(payer.address)).toBe(before);
  });

  it(`lets an authorisation whose renders failed be presented ${MAX_PRESENTATIONS} times in all, then refuses it`, async () => {
    const body = { url: fixture("/not-found"), width: 320, deviceScaleFactor: 1 };
    const header = await paymentFor(await post("/api/v1/screenshot", body));
    const before = await balanceOf(payer.address);
    for (let i = 0; i < MAX_PRESENTATIONS; i++) expect((await post("/api/v1/screenshot", body, { "payment-signature": header })).status).toBe(422);
    const refused = await post("/api/v1/screenshot", body, { "payment-signature": header });
    expect(refused.status).toBe(402);
    expect(((await refused.json()) as X402Body).error).toMatch(`presented ${MAX_PRESENTATIONS} times for requests that failed; sign a new one`);
    // Not even for a page that would render.
    expect((await post("/api/v1/screenshot", { ...body, url: fixture("/simple") }, { "payment-signature": header })).status).toBe(402);
    expect(await balanceOf(payer.address)).toBe(before);
  });

  it("keeps /api/v1/usage for API keys: a payment there is 401", async () => {
    const { sent, pay } = payingFetch();
    await pay(`${base}/api/v1/screenshot`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ url: fixture("/not-found") }),
    });
    const res = await fetch(`${base}/api/v1/usage`, { headers: { "payment-signature": sent.at(-1)! } });
    expect(res.status).toBe(401);
  });

  it("a strict x402 v1 client pays too, under the network name base-sepolia: the 402 body, X-PAYMENT, X-PAYMENT-RESPONSE", async () => {
    // v1 as its wire format is: requirements from the 402's JSON body, the payment in X-PAYMENT,
    // signed by @x402/evm's v1 scheme (what the legacy x402 package does, without its wallet SDKs).
    const { ExactEvmSchemeV1 } = await import("@x402/evm/v1");
    const url = `${base}/api/v1/screenshot`;
    const body = JSON.stringify({ url: fixture("/simple"), width: 320, deviceScaleFactor: 1 });
    const asked = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body });
    expect(asked.status).toBe(402);
    const required = (await asked.json()) as X402Body;
    expect(required.x402Version).toBe(1);
    const requirement = required.accepts.find((a) => a.network === "base-sepolia" && a.scheme === "exact");
    expect(requirement).toMatchObject({ maxAmountRequired: "5000", resource: url });
    const payment = await new ExactEvmSchemeV1(payer as never).createPaymentPayload(1, requirement as never);
    const before = await balanceOf(payer.address);
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", "x-payment": Buffer.from(JSON.stringify(payment)).toString("base64") },
      body,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/png");
    expect(decode(res.headers.get("x-payment-response"))).toMatchObject({ success: true, payer: payer.address });
    expect(await balanceOf(payer.address)).toBe(before - 5_000n);
  });

  it("tops up an account by $5 in USDC: the balance rises by 5,000,000 micro-USD", async () => {
    const signup = await post("/api/v1/signup", { email: `topup-${Date.now()}@x402.test` });
    const { api_key: key } = (await signup.json()) as { api_key: string };
    const unpaid = await post("/api/v1/topup", { amount_cents: 500 }, { authorization: `Bearer ${key}` });
    expect(unpaid.status).toBe(402);
    expect(decode(unpaid.headers.get("payment-required")).accepts[0].amount).toBe("5000000");
    const { pay, sent } = payingFetch();
    const before = await balanceOf(payer.address);
    const res = await pay(`${base}/api/v1/topup`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: '{"amount_cents":500}',
    });
    expect(res.status).toBe(200);
    const report = (await res.json()) as {
      balance_micro_usd: number;
      recent_usage: { kind: string; endpoint: string; amount_micro_usd: number }[];
      topup: { status: string; transaction: string };
    };
    expect(report.balance_micro_usd).toBe(250_000 + 5_000_000);
    expect(report.recent_usage[0]).toMatchObject({ kind: "topup", endpoint: "topup", amount_micro_usd: 5_000_000 });
    expect(report.topup).toEqual({ status: "credited", transaction: decode(res.headers.get("payment-response")).transaction });
    expect(await balanceOf(payer.address)).toBe(before - 5_000_000n);
    // The transfer is recorded once, as this account's top-up.
    expect(await getItem(`SETTLE#${report.topup.transaction}`, "SETTLE")).toMatchObject({ kind: "topup", amount: 5_000_000 });
    // The same payment presented again: refused, nothing credited.
    const again = await post("/api/v1/topup", { amount_cents: 500 }, { authorization: `Bearer ${key}`, "payment-signature": sent[0]! });
    expect(again.status).toBe(402);
    const usage = await fetch(`${base}/api/v1/usage`, { headers: { authorization: `Bearer ${key}` } });
    expect(((await usage.json()) as { balance_micro_usd: number }).balance_micro_usd).toBe(250_000 + 5_000_000);
    const small = await post("/api/v1/topup", { amount_cents: 499 }, { authorization: `Bearer ${key}` });
    expect(small.status).toBe(400);
  });
});

describe("x402 payment-identifier: a resend after a lost answer", () => {
  /** A payment for `quote` carrying the payment-identifier `id`, as the official client and extension package build it. */
  async function paymentWithId(quote: Response, id: string): Promise<string> {
    const required = decode(quote.headers.get("payment-required"));
    appendPaymentIdentifierToExtensions(required.extensions, id);
    const payload = await client.createPaymentPayload(required as never);
    expect(payload.extensions?.["payment-identifier"]).toMatchObject({ info: { id } });
    return Buffer.from(JSON.stringify(payload)).toString("base64");
  }
  const newId = () => `pay_${crypto.randomUUID().replaceAll("-", "")}`;

  it("is advertised in every paid 402 as the extension package declares it, the header still under 8 KB", async () => {
    const quote = await post("/api/v1/screenshot", { url: fixture("/simple") });
    expect(decode(quote.headers.get("payment-required")).extensions["payment-identifier"]).toEqual(declarePaymentIdentifierExtension(false));
    expect(quote.headers.get("payment-required")!.length).toBeLessThan(8192);
  });

  it("the same payment and id again gets the first answer and its PAYMENT-RESPONSE; one render, one transfer", async () => {
    const name = crypto.randomUUID();
    const body = { url: `${inject("fixtureUrl")}/zoo/counted?name=${name}`, width: 320, deviceScaleFactor: 1 };
    const header = await paymentWithId(await post("/api/v1/screenshot", body), newId());
    const before = await balanceOf(payer.address);
    const first = await post("/api/v1/screenshot", body, { "payment-signature": header });
    expect(first.status).toBe(200);
    const firstBytes = Buffer.from(await first.arrayBuffer());
    const resend = await post("/api/v1/screenshot", body, { "payment-signature": header });
    expect(resend.status).toBe(200);
    expect(resend.headers.get("idempotent-replayed")).toBe("true");
    expect(resend.headers.get("payment-response")).toBe(first.headers.get("payment-response"));
    expect(Buffer.from(await resend.arrayBuffer()).equals(firstBytes)).toBe(true);
    expect(await (await fetch(`${inject("fixtureUrl")}/zoo/__hits?name=counted:${name}`)).json()).toBe(1);
    expect(await balanceOf(payer.address)).toBe(before - 5_000n);
  });

  it("the same id with another payment or another body: 409 IDEMPOTENCY_CONFLICT, nothing paid; while the first runs: 409 IDEMPOTENCY_IN_PROGRESS", async () => {
    const id = newId();
    const body = { html: "<p>slow</p>", delay: 1500, width: 320, height: 100, deviceScaleFactor: 1 };
    const header = await paymentWithId(await post("/api/v1/html-to-screenshot", body), id);
    const before = await balanceOf(payer.address);
    const first = post("/api/v1/html-to-screenshot", body, { "payment-signature": header });
    await new Promise((resolve) => setTimeout(resolve, 600));
    const during = await post("/api/v1/html-to-screenshot", body, { "payment-signature": header });
    expect(during.status).toBe(409);
    expect(((await during.json()) as ErrorBody).error.code).toBe("IDEMPOTENCY_IN_PROGRESS");
    expect((await first).status).toBe(200);
    const another = await paymentWithId(await post("/api/v1/html-to-screenshot", body), id);
    const conflict = await post("/api/v1/html-to-screenshot", body, { "payment-signature": another });
    expect(conflict.status).toBe(409);
    expect(((await conflict.json()) as ErrorBody).error.code).toBe("IDEMPOTENCY_CONFLICT");
    const otherBody = await post("/api/v1/html-to-screenshot", { ...body, html: "<p>other</p>" }, { "payment-signature": header });
    expect(otherBody.status).toBe(409);
    expect(await balanceOf(payer.address)).toBe(before - 5_000n);
  });

  it("a render that failed frees its id: the resend is tried again, and nothing is paid", async () => {
    const body = { url: fixture("/not-found"), width: 320, deviceScaleFactor: 1 };
    const header = await paymentWithId(await post("/api/v1/screenshot", body), newId());
    const before = await balanceOf(payer.address);
    expect((await post("/api/v1/screenshot", body, { "payment-signature": header })).status).toBe(422);
    const resend = await post("/api/v1/screenshot", body, { "payment-signature": header });
    expect(resend.status).toBe(422);
    expect(resend.headers.get("idempotent-replayed")).toBeNull();
    expect(await balanceOf(payer.address)).toBe(before);
  });

  it("an id that is not 16 to 128 letters, digits, - or _: 400, nothing paid", async () => {
    const quote = await post("/api/v1/screenshot", { url: fixture("/simple") });
    const payload = decode(await paymentFor(quote));
    payload.extensions = { "payment-identifier": { info: { required: false, id: "short" } } };
    const res = await post("/api/v1/screenshot", { url: fixture("/simple") }, { "payment-signature": Buffer.from(JSON.stringify(payload)).toString("base64") });
    expect(res.status).toBe(400);
    expect(((await res.json()) as ErrorBody).error.message).toMatch(/^payment-identifier:/);
  });
});

describe("payments that do not match the requirements", () => {
  // A client misled about the requirements (a rewritten 402) signs for something else: refused.
  const misled = (rewrite: (requirements: Record<string, any>) => void) => {
    const client = new x402Client();
    registerExactEvmScheme(client, { signer: payer });
    client.setSpendControls(false);
    const tampering: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      const header = res.headers.get("payment-required");
      const paying = new Headers((input as Request).headers ?? init?.headers).has("payment-signature");
      // Only the first 402 is rewritten; the server's answer to the payment is passed on as it is.
      if (res.status !== 402 || !header || paying) return res;
      const required = decode(header);
      rewrite(required.accepts[0]);
      const headers = new Headers(res.headers);
      headers.set("payment-required", Buffer.from(JSON.stringify(required)).toString("base64"));
      return new Response(await res.text(), { status: 402, headers });
    };
    return wrapFetchWithPayment(tampering, client);
  };
  const body = JSON.stringify({ url: fixture("/simple"), width: 320, deviceScaleFactor: 1 });

  it.each([
    ["an under-priced payment", (r: Record<string, any>) => (r.amount = "1"), "value_mismatch"],
    ["a payment in another asset", (r: Record<string, any>) => (r.asset = "0x0000000000000000000000000000000000000bad"), "signature"],
    ["a payment to someone else", (r: Record<string, any>) => (r.payTo = "0x000000000000000000000000000000000000dEaD"), "recipient_mismatch"],
    ["a payment on another network", (r: Record<string, any>) => (r.network = "eip155:1"), "network_mismatch"],
    ["a payment that has already expired", (r: Record<string, any>) => (r.maxTimeoutSeconds = -3600), "valid_before"],
  ])("refuses %s with 402, the reason and fresh requirements", async (_name, rewrite, reason) => {
    const before = await balanceOf(payer.address);
    const res = await misled(rewrite)(`${base}/api/v1/screenshot`, { method: "POST", headers: { "content-type": "application/json" }, body });
    expect(res.status).toBe(402);
    const message = ((await res.json()) as X402Body).error;
    expect(message).toMatch(new RegExp(`^Payment refused: invalid_exact_evm_\\w*${reason}\\. `));
    expect(decode(res.headers.get("payment-required")).accepts[0].amount).toBe("5000");
    expect(await balanceOf(payer.address)).toBe(before);
  });

  it("refuses a payment header that is not x402 at all", async () => {
    const res = await post("/api/v1/screenshot", JSON.parse(body), { "payment-signature": "not base64 json" });
    expect(res.status).toBe(402);
    expect(((await res.json()) as X402Body).error).toContain("the payment header is not base64-encoded x402 JSON");
  });
});

describe("npm run pay", () => {
  it("pays from the dev payer and saves the image where the user stands", async () => {
    const { execFileSync } = await import("node:child_process");
    const { mkdtempSync, readFileSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const path = await import("node:path");
    // npm runs the script from the project's root; INIT_CWD is where `npm run pay` was typed.
    const userDir = mkdtempSync(path.join(tmpdir(), "shotline-pay-"));
    const out = path.join(userDir, "shot.png");
    const output = execFileSync(process.execPath, ["--import", "tsx", "dev/pay-cli.ts", fixture("/simple"), "--mockup", "--out", "shot.png"], {
      env: { ...process.env, LOCAL_DIR: inject("localDir"), INIT_CWD: userDir },
      encoding: "utf8",
    });
    expect(output).toMatch(/^saved .*shot\.png \(mockup, \$0\.01\), paid by 0x[0-9a-fA-F]{40} in transaction 0x[0-9a-f]{64}/);
    expect(readFileSync(out).subarray(1, 4).toString()).toBe("PNG");
  });
});
