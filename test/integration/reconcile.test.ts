// Charges end in a known state whatever happens to the process: delivered, refunded by the failure
// path, or refunded by the reconciler once their request has died. In process against the shared
// stack's DynamoDB Local (charges backdated past the grace period, so that no other file's requests
// in flight are touched), then for real: `npm run dev` killed with SIGKILL in the middle of a
// charged render, and started again.
import { rmSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { fundedKey, startDev } from "../../dev/harness/dev-process.js";
import { PRICES } from "../../lib/routes.js";
import { useSharedStackInProcess } from "../helpers/in-process.js";
import { allUsageEntries, getItem } from "../helpers/ledger.js";

type Ledger = typeof import("../../lib/billing/ledger.js");
type Accounts = typeof import("../../lib/billing/accounts.js");
let ledger: Ledger;
let accounts: Accounts;

const GRACE_MS = 5 * 60_000;
// Backdated past the grace period: only this file's charges are old enough for the reconciler.
const longAgo = () => new Date(Date.now() - 2 * GRACE_MS);

beforeAll(async () => {
  useSharedStackInProcess();
  ledger = await import("../../lib/billing/ledger.js");
  accounts = await import("../../lib/billing/accounts.js");
});

const newAccount = async () => (await accounts.createAccount(`reconcile-${crypto.randomUUID()}@shotline.test`, crypto.randomUUID())).account;
const balanceOf = async (accountId: string) => (await accounts.getAccount(accountId))!.balance;
const charge = (accountId: string) =>
  ledger.chargeForRequest(accountId, PRICES.screenshot, { requestId: crypto.randomUUID(), endpoint: "screenshot", at: longAgo() });
const reconcile = () => ledger.reconcileCharges(Date.now(), GRACE_MS);

describe("the reconciler", () => {
  it("refunds a charge that was neither delivered nor refunded, once, however often it runs", async () => {
    // (The shared stack's own reconciler, on its timer, may be the one that refunds it: either way, once.)
    const account = await newAccount();
    await charge(account.accountId);
    await reconcile();
    expect(await balanceOf(account.accountId)).toBe(account.balance);
    await reconcile();
    expect(await balanceOf(account.accountId)).toBe(account.balance);
    expect((await allUsageEntries(account.accountId)).filter((e) => e.kind === "charge").map((e) => e.status)).toEqual(["refunded"]);
  });

  it("gives a signed link's share of its key's daily limit back with the refund", async () => {
    const account = await newAccount();
    const cap = { keyId: `sk_${crypto.randomUUID().slice(0, 16)}`, limit: PRICES.screenshot };
    const at = longAgo();
    await ledger.chargeForRequest(account.accountId, PRICES.screenshot, { requestId: crypto.randomUUID(), endpoint: "signed-screenshot", at }, cap);
    const spend = { pk: `SIGNKEY#${cap.keyId}`, sk: `SPEND#${at.toISOString().slice(0, 10)}` };
    expect((await getItem(spend.pk, spend.sk))?.spent).toBe(PRICES.screenshot);
    // The key's day is full: another charge is refused, and costs nothing.
    await expect(
      ledger.chargeForRequest(account.accountId, PRICES.screenshot, { requestId: crypto.randomUUID(), endpoint: "signed-screenshot", at }, cap),
    ).rejects.toMatchObject({ code: "DAILY_LIMIT_REACHED" });
    await reconcile();
    expect((await getItem(spend.pk, spend.sk))?.spent).toBe(0);
    expect(await balanceOf(account.accountId)).toBe(account.balance);
  });

  it("two runs at once refund it once", async () => {
    const account = await newAccount();
    await charge(account.accountId);
    await Promise.all([reconcile(), reconcile()]);
    expect(await balanceOf(account.accountId)).toBe(account.balance);
    expect((await allUsageEntries(account.accountId)).filter((e) => e.status === "refunded")).toHaveLength(1);
  });

  it("leaves a delivered charge alone, and a refunded one is not refunded again", async () => {
    const account = await newAccount();
    const delivered = await charge(account.accountId);
    await ledger.markDelivered(delivered);
    const refunded = await charge(account.accountId);
    expect(await ledger.refundCharge(refunded)).toBe(true);
    await reconcile();
    expect(await balanceOf(account.accountId)).toBe(account.balance - PRICES.screenshot);
    // Neither the failure path nor the reconciler refunds what was delivered.
    expect(await ledger.refundCharge(delivered)).toBe(false);
    expect(await balanceOf(account.accountId)).toBe(account.balance - PRICES.screenshot);
    const statuses = (await allUsageEntries(account.accountId)).filter((e) => e.kind === "charge").map((e) => e.status);
    expect(statuses.sort()).toEqual(["charged", "refunded"]);
  });
});

describe("the ledger check (npm run admin -- reconcile --check)", () => {
  it("names a stranded charge, and a balance that does not match its entries", async () => {
    const { checkLedger } = await import("../../dev/ledger-invariants.js");
    const { documents } = await import("../../lib/billing/dynamodb.js");
    const { UpdateCommand } = await import("@aws-sdk/lib-dynamodb");
    const account = await newAccount();
    const stranded = await charge(account.accountId);
    expect((await checkLedger(Date.now(), GRACE_MS)).problems).toContain(
      `charge ${stranded.requestId} of ${account.accountId} is neither delivered nor refunded past the grace period`,
    );
    await reconcile();
    // A balance changed behind the ledger's back (never done by the service), then put right again.
    const nudge = (by: number) =>
      documents.send(
        new UpdateCommand({
          TableName: inject("devInfo").tableName,
          Key: { pk: `ACCT#${account.accountId}`, sk: "ACCT" },
          UpdateExpression: "SET balance = balance + :by",
          ExpressionAttributeValues: { ":by": by },
        }),
      );
    await nudge(1);
    try {
      const { problems } = await checkLedger(Date.now(), GRACE_MS);
      expect(problems).toContain(`account ${account.accountId}: balance ${account.balance + 1} + held 0 != credits ${account.balance} - charges 0`);
      expect(problems.join("\n")).not.toContain(stranded.requestId);
    } finally {
      await nudge(-1);
    }
  });
});

describe("npm run dev killed in the middle of a charged render", () => {
  it("refunds the charge, once, after it starts again and the grace period has passed", async () => {
    const localDir = await mkdtemp(path.join(tmpdir(), "shotline-sigkill-"));
    const env = {
      LOCAL_DIR: localDir,
      LOCAL_EPHEMERAL: "0",
      ALLOWED_PRIVATE_HOSTS: new URL(inject("fixtureUrl")).host,
      RECONCILE_GRACE_SECONDS: "4",
    };
    try {
      const first = await startDev(env);
      const key = await fundedKey(first.info.baseUrl, localDir, "sigkill@shotline.test", 1);
      const usage = async (baseUrl: string) =>
        (await (await fetch(`${baseUrl}/api/v1/usage`, { headers: { authorization: `Bearer ${key}` } })).json()) as {
          balance_micro_usd: number;
          recent_usage: { kind: string; status: string }[];
        };
      const before = (await usage(first.info.baseUrl)).balance_micro_usd;
      // A page that never finishes loading: the render is in flight, charged, when the process dies.
      void fetch(`${first.info.baseUrl}/api/v1/screenshot`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
        body: JSON.stringify({ url: `${inject("fixtureUrl")}/zoo/hang` }),
      }).catch(() => undefined);
      for (let i = 0; i < 50 && (await usage(first.info.baseUrl)).balance_micro_usd === before; i++) await new Promise((r) => setTimeout(r, 100));
      expect((await usage(first.info.baseUrl)).balance_micro_usd).toBe(before - PRICES.screenshot);
      expect(await first.stop("SIGKILL")).toBeNull();

      const second = await startDev(env);
      try {
        let report = await usage(second.info.baseUrl);
        for (const until = Date.now() + 20_000; report.balance_micro_usd !== before && Date.now() < until; ) {
          await new Promise((r) => setTimeout(r, 250));
          report = await usage(second.info.baseUrl);
        }
        expect(report.balance_micro_usd).toBe(before);
        // Several more runs of the reconciler (every 2 s): still one refund.
        await new Promise((r) => setTimeout(r, 5_000));
        report = await usage(second.info.baseUrl);
        expect(report.balance_micro_usd).toBe(before);
        expect(report.recent_usage.filter((e) => e.kind === "charge").map((e) => e.status)).toEqual(["refunded"]);
      } finally {
        await second.stop();
      }
    } finally {
      rmSync(localDir, { recursive: true, force: true });
    }
  }, 120_000);
});
