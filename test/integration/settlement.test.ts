// Settlement and transfers in process against the shared stack's DynamoDB Local and anvil (the
// in-process facilitator, as the dev server runs it): the edges a whole request cannot reach on
// demand. The paths through real requests are in x402.test.ts and money-faults.test.ts.
import { PutCommand } from "@aws-sdk/lib-dynamodb";
import { parseAbi } from "viem";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { DEV_KEYS } from "../../dev/chain.js";
import { useSharedStackInProcess } from "../helpers/in-process.js";
import { getItem } from "../helpers/ledger.js";
import { localPayer } from "../helpers/x402.js";

const info = inject("devInfo");
const base = inject("baseUrl");
let ledger: typeof import("../../lib/billing/ledger.js");
let accounts: typeof import("../../lib/billing/accounts.js");
let x402: typeof import("../../lib/payments/x402.js");
let settlement: typeof import("../../lib/payments/settlement.js");

beforeAll(async () => {
  useSharedStackInProcess({
    X402_PAY_TO: info.payTo,
    X402_NETWORK: info.network,
    X402_V1_NETWORK: "base-sepolia",
    X402_ASSET: info.usdcAddress,
    X402_RPC_URL: info.rpcUrl,
    X402_FACILITATOR_PRIVATE_KEY: DEV_KEYS.facilitator,
  });
  ledger = await import("../../lib/billing/ledger.js");
  accounts = await import("../../lib/billing/accounts.js");
  x402 = await import("../../lib/payments/x402.js");
  settlement = await import("../../lib/payments/settlement.js");
});

const hex = (bytes: number) => `0x${Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString("hex")}`;

describe("a transfer", () => {
  it("credits a top-up once, ever: three records at once, and again 15 minutes later from another request, credit it once", async () => {
    const { account } = await accounts.createAccount(`transfer-${crypto.randomUUID()}@shotline.test`, crypto.randomUUID());
    const transfer = {
      transaction: hex(32),
      payer: hex(20),
      amount: 5_000_000,
      network: info.network,
      requestId: crypto.randomUUID(),
      at: new Date(),
      paymentId: crypto.randomUUID(),
      accountId: account.accountId,
    };
    const recorded = await Promise.all([ledger.recordTransfer(transfer), ledger.recordTransfer(transfer), ledger.recordTransfer(transfer)]);
    expect(recorded.sort()).toEqual([false, false, true]);
    // Past DynamoDB's 10-minute idempotency window, by another request: the create-only record still refuses it.
    expect(await ledger.recordTransfer({ ...transfer, requestId: crypto.randomUUID(), at: new Date(Date.now() + 15 * 60_000) })).toBe(false);
    expect((await accounts.getAccount(account.accountId))!.balance).toBe(account.balance + 5_000_000);
    expect(await getItem(`SETTLE#${transfer.transaction}`, "SETTLE")).toMatchObject({ kind: "topup", accountId: account.accountId, amount: 5_000_000 });
  });
});

describe("settling", () => {
  it("with no time left to start: TIMEOUT, nothing asked of the facilitator, the authorisation unspent and free to pay again", async () => {
    const { chain, usdc, paymentFor } = localPayer(info);
    const body = JSON.stringify({ url: `${inject("fixtureUrl")}/simple`, width: 320, deviceScaleFactor: 1 });
    const quote = await fetch(`${base}/api/v1/screenshot`, { method: "POST", headers: { "content-type": "application/json" }, body });
    const headers = { "payment-signature": await paymentFor(quote) };
    const resource = { url: `${base}/api/v1/screenshot`, description: "test", mimeType: "image/png" };
    const payment = await x402.verifyPayment(headers, 5_000, resource, crypto.randomUUID());
    // Whether the authorisation was spent, from the token contract itself (other files pay from the
    // same dev payer at the same time, so its balance cannot tell).
    const spent = () =>
      chain.readContract({
        address: usdc,
        abi: parseAbi(["function authorizationState(address authorizer, bytes32 nonce) view returns (bool)"]),
        functionName: "authorizationState",
        args: [payment.authorization.from as `0x${string}`, payment.authorization.nonce as `0x${string}`],
      });
    await expect(settlement.settlePayment(payment, { kind: "render" }, { resource, at: new Date() }, Date.now() + 500)).rejects.toMatchObject({
      code: "TIMEOUT",
    });
    expect(await getItem(`PAY#${payment.id}`, "PAY")).toMatchObject({ state: "released", presentations: 1 });
    expect(await spent(), "the payer keeps the money").toBe(false);
    // The same authorisation pays again: it is reserved for the next request.
    const again = await x402.verifyPayment(headers, 5_000, resource, crypto.randomUUID());
    expect(await getItem(`PAY#${again.id}`, "PAY")).toMatchObject({ state: "reserved", presentations: 2 });
    await x402.releasePayment(again);
    expect(await spent()).toBe(false);
  });

  it("a settlement left pending whose authorisation was never used and has expired: the reconciler closes it unpaid, once", async () => {
    const { documents } = await import("../../lib/billing/dynamodb.js");
    const { unconfirmedKey, paymentKey } = await import("../../lib/billing/keys.js");
    const paymentId = crypto.randomUUID();
    const marker = {
      ...unconfirmedKey(new Date(Date.now() - 10 * 60_000), paymentId),
      paymentId,
      requestId: crypto.randomUUID(),
      at: new Date().toISOString(),
      accountId: null,
      amount: 5_000,
      payer: info.payTo,
      network: info.network,
      from: localPayer(info).payer.address,
      nonce: hex(32),
      to: info.payTo,
      value: "5000",
      validBefore: String(Math.floor(Date.now() / 1000) - 120),
    };
    await documents.send(new PutCommand({ TableName: info.tableName, Item: { ...paymentKey(paymentId), state: "settling", requestId: marker.requestId } }));
    await documents.send(new PutCommand({ TableName: info.tableName, Item: marker }));
    // (The shared stack's own reconciler may get there first: either way, closed once.)
    await settlement.confirmSettlements(Date.now());
    expect(await getItem(marker.pk, marker.sk)).toBeUndefined();
    expect(await getItem(`PAY#${paymentId}`, "PAY")).toMatchObject({ state: "expired" });
    expect((await settlement.confirmSettlements(Date.now())).expired).toBe(0);
  });
});
