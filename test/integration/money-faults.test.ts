// Money under faults, with real processes on loopback: a local stack of this file's own (so that its
// chain can stop mining and its DynamoDB Local can be stopped without touching other files), the
// real x402 client, anvil with Circle's USDC. Each case says what happened to the money.
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { admin, type DevProcess, fundedKey, signUp, startDev } from "../../dev/harness/dev-process.js";
import { decode, localPayer } from "../helpers/x402.js";

// Settling gets 8 s; the in-process facilitator answers settlement_pending after 4 s without a receipt.
const SETTLE_SECONDS = 8;
let dev: DevProcess;
let x402: ReturnType<typeof localPayer>;

beforeAll(async () => {
  dev = await startDev({
    ALLOWED_PRIVATE_HOSTS: new URL(inject("fixtureUrl")).host,
    X402_SETTLE_TIMEOUT_SECONDS: String(SETTLE_SECONDS),
    RECONCILE_GRACE_SECONDS: "4",
    PAGE_LOAD_TIMEOUT_MS: "3000",
    LOG_LEVEL: "error",
  });
  x402 = localPayer(dev.info);
}, 90_000);
afterAll(async () => {
  await x402?.rpc("evm_setAutomine", [true]).catch(() => undefined);
  await dev?.stop();
});

const base = () => dev.info.baseUrl;
const fixture = (path: string) => `${inject("fixtureUrl")}${path}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${base()}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });

/** Waits until `check` holds (the dev stack's reconciler runs every 2 s), or fails after `ms`. */
async function eventually(check: () => Promise<boolean>, ms = 20_000): Promise<void> {
  for (const until = Date.now() + ms; !(await check()); await sleep(250)) if (Date.now() > until) throw new Error("did not happen in time");
}

/** Resolves once the chain has a transaction waiting to be mined. */
async function broadcast(): Promise<void> {
  await eventually(async () => Number((await x402.rpc("txpool_status")).pending) > 0);
}

/** `npm run admin -- reconcile --check` on this file's stack: its report, sound or not. */
function ledgerCheck(): string {
  try {
    return admin(dev.localDir, "reconcile", "--check");
  } catch (error) {
    return String((error as { stdout?: string }).stdout);
  }
}

describe("a facilitator that answers settlement_pending", () => {
  it("then the transfer is mined while the request waits: the output, paid once, recorded once", async () => {
    await x402.rpc("evm_setAutomine", [false]);
    try {
      const before = await x402.balanceOf(x402.payer.address);
      const { pay } = x402.payingFetch();
      const answer = pay(`${base()}/api/v1/screenshot`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ url: fixture("/simple"), width: 320, deviceScaleFactor: 1 }),
      });
      await broadcast();
      // Past the facilitator's 4 s (it answers pending), within the 8 s the request gives settling.
      await sleep(5_000);
      await x402.rpc("evm_mine");
      const res = await answer;
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("image/png");
      const receipt = decode(res.headers.get("payment-response"));
      expect(receipt).toMatchObject({ success: true });
      expect(await x402.balanceOf(x402.payer.address)).toBe(before - 5_000n);
    } finally {
      await x402.rpc("evm_setAutomine", [true]);
    }
  }, 60_000);

  it("and it is still not mined when settling's time is up: the output (never a gateway timeout), then the reconciler records the transfer once it is mined", async () => {
    await x402.rpc("evm_setAutomine", [false]);
    try {
      const before = await x402.balanceOf(x402.payer.address);
      const settlements = () => Number(/ (\d+) settlements, /.exec(ledgerCheck())?.[1]);
      const recorded = settlements();
      const { pay } = x402.payingFetch();
      const started = Date.now();
      const res = await pay(`${base()}/api/v1/screenshot`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ url: fixture("/simple"), width: 320, deviceScaleFactor: 1 }),
      });
      expect(Date.now() - started).toBeLessThan(28_000);
      // The payer may have paid: they get what they paid for, told that the transfer is pending.
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("image/png");
      const receipt = decode(res.headers.get("payment-response"));
      expect(receipt).toMatchObject({ success: false, errorReason: "settlement_pending" });
      expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
      expect(await x402.balanceOf(x402.payer.address), "not moved yet").toBe(before);
      await x402.rpc("evm_mine");
      await eventually(async () => ledgerCheck().includes("0 settlements unconfirmed: sound"));
      expect(await x402.balanceOf(x402.payer.address)).toBe(before - 5_000n);
      expect(settlements(), "recorded once").toBe(recorded + 1);
    } finally {
      await x402.rpc("evm_setAutomine", [true]);
    }
  }, 90_000);
});

describe("a top-up whose transfer is pending", () => {
  it("answers 202 pending, credits the balance once when the transfer is mined, and never again for the same payment", async () => {
    const { api_key: key } = await signUp(base(), `pending-topup-${Date.now()}@shotline.test`);
    const balance = async () =>
      ((await (await fetch(`${base()}/api/v1/usage`, { headers: { authorization: `Bearer ${key}` } })).json()) as { balance_micro_usd: number })
        .balance_micro_usd;
    const start = await balance();
    await x402.rpc("evm_setAutomine", [false]);
    let header: string;
    try {
      header = await x402.paymentFor(await post("/api/v1/topup", { amount_cents: 500 }, { authorization: `Bearer ${key}` }));
      const res = await post("/api/v1/topup", { amount_cents: 500 }, { authorization: `Bearer ${key}`, "payment-signature": header });
      expect(res.status).toBe(202);
      const report = (await res.json()) as { balance_micro_usd: number; topup: { status: string; transaction: string } };
      expect(report.topup.status).toBe("pending");
      expect(report.balance_micro_usd).toBe(start);
      await x402.rpc("evm_mine");
    } finally {
      await x402.rpc("evm_setAutomine", [true]);
    }
    await eventually(async () => (await balance()) === start + 5_000_000);
    // More reconciler passes, and the same payment presented again: still one credit.
    await sleep(5_000);
    const again = await post("/api/v1/topup", { amount_cents: 500 }, { authorization: `Bearer ${key}`, "payment-signature": header });
    expect(again.status).toBe(402);
    expect(await balance()).toBe(start + 5_000_000);
    expect(ledgerCheck()).toMatch(/: sound$/m);
  }, 90_000);
});

describe("DynamoDB Local stopped during a request", () => {
  /** DynamoDB Local's java process: the one java among the dev process's descendants. */
  const dynamodbPid = () => {
    const rows = execFileSync("ps", ["-eo", "pid=,ppid=,comm="], { encoding: "utf8" })
      .trim()
      .split("\n")
      .map((row) => row.trim().split(/\s+/));
    const family = new Set([String(dev.child.pid)]);
    for (let grew = true; grew; ) {
      grew = false;
      for (const [pid, ppid] of rows) if (family.has(ppid!) && !family.has(pid!)) grew = Boolean(family.add(pid!));
    }
    const java = rows.filter(([pid, , comm]) => family.has(pid!) && comm === "java");
    expect(java, "one DynamoDB Local").toHaveLength(1);
    return Number(java[0]![0]);
  };

  it("after the charge: the failed render answers its JSON error at once, and once the table is back the charge is refunded, once", async () => {
    const key = await fundedKey(base(), dev.localDir, `dynamodb-stop-${Date.now()}@shotline.test`, 1);
    const usage = async () =>
      (await (await fetch(`${base()}/api/v1/usage`, { headers: { authorization: `Bearer ${key}` } })).json()) as {
        balance_micro_usd: number;
        recent_usage: { kind: string; status: string }[];
      };
    const before = (await usage()).balance_micro_usd;
    const pid = dynamodbPid();
    // A page that never loads: charged, then RENDER_TIMEOUT at the 3 s page-load limit, when the refund finds the table stopped.
    const answer = post("/api/v1/screenshot", { url: fixture("/zoo/hang") }, { authorization: `Bearer ${key}` });
    await sleep(1_000);
    process.kill(pid, "SIGSTOP");
    let res: Response;
    const started = Date.now();
    try {
      res = await answer;
    } finally {
      process.kill(pid, "SIGCONT");
    }
    expect(res.status).toBe(504);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("RENDER_TIMEOUT");
    // Waiting on the table would last until it is back (after the answer: never); the render's own
    // time-out and the stuck-browser probe take 2-5 s, more on a slow machine.
    expect(Date.now() - started, "the answer did not wait on the stopped table").toBeLessThan(10_000);
    await eventually(async () => (await usage()).balance_micro_usd === before);
    await sleep(5_000);
    const report = await usage();
    expect(report.balance_micro_usd).toBe(before);
    expect(report.recent_usage.filter((entry) => entry.kind === "charge").map((entry) => entry.status)).toEqual(["refunded"]);
  }, 60_000);

  it("before the request: our JSON error before the gateway's limit, and no charge left once the table is back", async () => {
    const key = await fundedKey(base(), dev.localDir, `dynamodb-down-${Date.now()}@shotline.test`, 1);
    const balance = async () =>
      ((await (await fetch(`${base()}/api/v1/usage`, { headers: { authorization: `Bearer ${key}` } })).json()) as { balance_micro_usd: number })
        .balance_micro_usd;
    const before = await balance();
    const pid = dynamodbPid();
    process.kill(pid, "SIGSTOP");
    let res: Response;
    const started = Date.now();
    try {
      res = await post("/api/v1/screenshot", { url: fixture("/simple") }, { authorization: `Bearer ${key}` });
    } finally {
      process.kill(pid, "SIGCONT");
    }
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(res.status).toBeGreaterThanOrEqual(500);
    expect(((await res.json()) as { error: { code: string } }).error.code).toMatch(/^(INTERNAL_ERROR|RENDER_TIMEOUT)$/);
    // Whatever reached the table while it was stopped lands now; the reconciler refunds a charge left behind.
    await sleep(6_000);
    await eventually(async () => (await balance()) === before);
    expect(ledgerCheck()).toMatch(/: sound$/m);
  }, 60_000);
});

it("the ledger of this file's stack is sound", () => {
  expect(ledgerCheck()).toMatch(/0 charges in flight, 0 settlements unconfirmed: sound$/m);
});
