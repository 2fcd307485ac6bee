// Accounts, keys, the ledger and rate limits, through the local stack and DynamoDB Local.
import { describe, expect, inject, it } from "vitest";
import { admin, startDev } from "../../dev/harness/dev-process.js";
import { type ErrorBody, postJson, type X402Body } from "../helpers/api.js";
import { allUsageEntries, getItem, putItem } from "../helpers/ledger.js";

const base = () => inject("baseUrl");
const fixture = (path: string) => `${inject("fixtureUrl")}${path}`;
let counter = 0;
const uniqueEmail = (tag: string) => `${tag}-${Date.now()}-${counter++}@billing.test`;

type Usage = {
  balance_cents: number;
  balance_micro_usd: number;
  total_spent_cents: number;
  total_spent_micro_usd: number;
  auto_topup_enabled: boolean;
  recent_usage: { id: string; kind: string; endpoint: string; amount_micro_usd: number; status: string; created_at: string }[];
};

async function signup(email = uniqueEmail("user"), baseUrl = base()) {
  const res = await fetch(`${baseUrl}/api/v1/signup`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email }) });
  expect(res.status).toBe(201);
  const body = (await res.json()) as { api_key: string; account_id: string; balance_cents: number; balance_micro_usd: number; bonus: string };
  return { ...body, email };
}

const usage = async (key: string, baseUrl = base()) => {
  const res = await fetch(`${baseUrl}/api/v1/usage`, { headers: { authorization: `Bearer ${key}` } });
  expect(res.status).toBe(200);
  return (await res.json()) as Usage;
};

const auth = (key: string) => ({ authorization: `Bearer ${key}` });
const tinyHtml = { html: "<p>hi</p>", width: 320, height: 100, deviceScaleFactor: 1 };

describe("signup and keys", () => {
  it("signs up with the bonus, the key works, and usage shows the bonus", async () => {
    const account = await signup();
    expect(account.api_key).toMatch(/^shl_live_[A-Za-z0-9_-]{43}$/);
    expect(account).toMatchObject({ balance_cents: 25, balance_micro_usd: 250_000 });
    const report = await usage(account.api_key);
    expect(report).toMatchObject({ balance_cents: 25, balance_micro_usd: 250_000, total_spent_cents: 0, total_spent_micro_usd: 0, auto_topup_enabled: false });
    expect(report.recent_usage).toEqual([
      { id: expect.any(String), kind: "bonus", endpoint: "signup", amount_micro_usd: 250_000, status: "credited", created_at: expect.any(String) },
    ]);
  });

  it("a known address signs up again: its own account and key, no second bonus, the first account untouched", async () => {
    const first = await signup();
    expect(first).toMatchObject({ bonus: "credited", balance_micro_usd: 250_000 });
    const again = await signup(` ${first.email.toUpperCase()} `);
    expect(again).toMatchObject({ bonus: "none", balance_micro_usd: 0 });
    expect(again.account_id).not.toBe(first.account_id);
    expect((await usage(again.api_key)).recent_usage).toEqual([]);
    expect((await usage(first.api_key)).balance_micro_usd).toBe(250_000);
  });

  it("one bonus per person: the spellings a farmer would try are the same address", async () => {
    const name = `farmer.${Date.now()}`;
    expect(await signup(`${name}@gmail.com`)).toMatchObject({ bonus: "credited" });
    const compact = name.replaceAll(".", "");
    for (const spelling of [
      `${name}+1@gmail.com`,
      `${compact}@gmail.com`,
      `${compact.slice(0, 3)}.${compact.slice(3)}@googlemail.com`,
      `${name.toUpperCase()}+bonus@GMAIL.COM`,
    ])
      expect(await signup(spelling), spelling).toMatchObject({ bonus: "none", balance_micro_usd: 0 });
    // Yahoo's disposable "-keyword" addresses and Yandex's domains (validator.js's rules).
    expect(await signup(`${compact}@yahoo.com`)).toMatchObject({ bonus: "credited" });
    expect(await signup(`${compact}-shop@yahoo.com`)).toMatchObject({ bonus: "none" });
    expect(await signup(`${compact}@ya.ru`)).toMatchObject({ bonus: "credited" });
    expect(await signup(`${compact}@yandex.com`)).toMatchObject({ bonus: "none" });
  });

  it("a reservation made before addresses were canonical is rewritten by the operator's migration, and then holds", async () => {
    // As signup stored it then: the address lower-cased, dots and all.
    const name = `old.timer.${Date.now()}`;
    const legacy = await signup(`${name}@example.com`);
    await putItem({ pk: `EMAIL#${name}@googlemail.com`, sk: "EMAIL", accountId: legacy.account_id });
    // And one made before providers' rules were validator.js's: a Yahoo "-keyword" kept as it was.
    const yahoo = name.replaceAll(".", "_");
    await putItem({ pk: `EMAIL#${yahoo}-deals@yahoo.com`, sk: "EMAIL", accountId: legacy.account_id });
    const migrated = admin(localDirOfSharedStack(), "migrate-emails");
    expect(migrated).toMatch(/added [1-9]\d* in the canonical form/);
    expect(await getItem(`EMAIL#${name.replaceAll(".", "")}@gmail.com`, "EMAIL")).toMatchObject({ accountId: legacy.account_id });
    expect(await getItem(`EMAIL#${name}@googlemail.com`, "EMAIL")).toBeDefined();
    expect(await signup(`${name.replaceAll(".", "")}@gmail.com`)).toMatchObject({ bonus: "none" });
    expect(await getItem(`EMAIL#${yahoo}@yahoo.com`, "EMAIL")).toMatchObject({ accountId: legacy.account_id });
    expect(await signup(`${yahoo}@yahoo.com`)).toMatchObject({ bonus: "none" });
    // Run again: nothing more to add for it, nothing lost.
    expect(admin(localDirOfSharedStack(), "migrate-emails")).toMatch(/^read \d+ bonus reservations/);
  });

  it("an address at a disposable-mail domain gets an account and a key, without the bonus", async () => {
    for (const domain of ["mailinator.com", "inbox.mailinator.com"]) {
      const body = await signup(`throwaway-${Date.now()}@${domain}`);
      expect(body, domain).toMatchObject({ bonus: "none", balance_micro_usd: 0 });
      const report = await usage(body.api_key);
      expect(report.recent_usage, domain).toEqual([]);
    }
  });

  it("a privacy-relay address gets an account without the bonus; a domain in look-alike letters of another script is refused, not read as the one it imitates", async () => {
    for (const domain of ["duck.com", "mozmail.com", "alias.simplelogin.com"]) {
      const body = await signup(`relay-${Date.now()}@${domain}`);
      expect(body, domain).toMatchObject({ bonus: "none", balance_micro_usd: 0 });
    }
    // gmail.com with a Cyrillic "а", as typed and as its xn-- name: the real address's bonus stays its own.
    const name = `victim${Date.now()}`;
    for (const email of [`${name}@gm\u0430il.com`, `${name}@xn--gmil-63d.com`]) {
      const res = await postJson("/api/v1/signup", { email }, {});
      expect(res.status, email).toBe(400);
      expect(((await res.json()) as ErrorBody).error.message, email).toMatch(/^Invalid request: email: .*look-alike letters of another script/);
    }
    expect(await signup(`${name}@gmail.com`)).toMatchObject({ bonus: "credited" });
  });

  it("answers 401 for an unknown or malformed key, and for usage without a key", async () => {
    const unknown = `shl_live_${"A".repeat(43)}`;
    for (const authorization of [`Bearer ${unknown}`, "Bearer nope", "Basic dXNlcjpwYXNz", "Bearer"]) {
      const res = await fetch(`${base()}/api/v1/usage`, { headers: { authorization } });
      expect(res.status, authorization).toBe(401);
      expect(((await res.json()) as ErrorBody).error.code).toBe("UNAUTHORIZED");
      const shot = await postJson("/api/v1/screenshot", { url: fixture("/simple") }, { authorization });
      expect(shot.status, authorization).toBe(401);
    }
    const none = await fetch(`${base()}/api/v1/usage`);
    expect(none.status).toBe(401);
  });

  it("answers 402 PAYMENT_REQUIRED on a priced endpoint without Authorization, and validates first", async () => {
    const res = await postJson("/api/v1/screenshot", { url: fixture("/simple") }, {});
    expect(res.status).toBe(402);
    expect(((await res.json()) as X402Body).code).toBe("PAYMENT_REQUIRED");
    const invalid = await postJson("/api/v1/screenshot", { url: fixture("/simple"), width: 1 }, {});
    expect(invalid.status).toBe(400);
  });

  it("PATCH /api/v1/account turns auto-topup off, and on only with a configuration (test/integration/auto-topup.test.ts)", async () => {
    const { api_key: key } = await signup();
    const patch = (enabled: boolean) =>
      fetch(`${base()}/api/v1/account`, {
        method: "PATCH",
        headers: { "content-type": "application/json", ...auth(key) },
        body: JSON.stringify({ auto_topup_enabled: enabled }),
      });
    expect((await patch(false)).status).toBe(200);
    expect((await patch(true)).status).toBe(400);
    expect((await usage(key)).auto_topup_enabled).toBe(false);
  });
});

describe("charging", () => {
  it.each([
    ["/api/v1/screenshot", { url: fixture("/simple"), width: 320, deviceScaleFactor: 1 }, 5_000],
    ["/api/v1/screenshot", { url: fixture("/simple"), width: 320, deviceScaleFactor: 1, style: "mockup" }, 10_000],
    ["/api/v1/html-to-screenshot", tinyHtml, 5_000],
    ["/api/v1/html-to-screenshot", { ...tinyHtml, style: "mockup", frame: "none" }, 10_000],
  ] as const)("%s %j debits exactly its price and writes one usage entry", async (path, body, price) => {
    const account = await signup();
    const res = await postJson(path, body, auth(account.api_key));
    expect(res.status).toBe(200);
    const report = await usage(account.api_key);
    expect(report.balance_micro_usd).toBe(250_000 - price);
    expect(report.total_spent_micro_usd).toBe(price);
    const charges = report.recent_usage.filter((e) => e.kind === "charge");
    expect(charges).toEqual([
      {
        id: res.headers.get("x-request-id"),
        kind: "charge",
        endpoint: path.split("/").pop(),
        amount_micro_usd: price,
        status: "charged",
        created_at: expect.any(String),
      },
    ]);
  });

  it("refunds a render that fails, and the entry says so", async () => {
    const account = await signup();
    const res = await postJson("/api/v1/screenshot", { url: fixture("/not-found") }, auth(account.api_key));
    expect(res.status).toBe(422);
    const report = await usage(account.api_key);
    expect(report.balance_micro_usd).toBe(250_000);
    expect(report.total_spent_micro_usd).toBe(0);
    expect(report.recent_usage.find((e) => e.kind === "charge")).toMatchObject({
      id: res.headers.get("x-request-id"),
      status: "refunded",
      amount_micro_usd: 5_000,
    });
  });

  it("says what the request costs and what the balance is when it is too low", async () => {
    const account = await signup();
    // 250,000 = 25 mockups; the 26th is refused.
    // 25 renders at once: past the default renders in flight (a raised number has room to spare: slots are tried at random).
    admin(localDirOfSharedStack(), "limit", account.email, "100", "100");
    await Promise.all(
      Array.from({ length: 25 }, () => postJson("/api/v1/html-to-screenshot", { ...tinyHtml, style: "mockup", frame: "none" }, auth(account.api_key))),
    );
    const res = await postJson("/api/v1/html-to-screenshot", { ...tinyHtml, style: "mockup", frame: "none" }, auth(account.api_key));
    expect(res.status).toBe(402);
    expect(((await res.json()) as ErrorBody).error).toEqual({
      code: "INSUFFICIENT_BALANCE",
      message: "This request costs $0.01 and the balance is $0.00. Top up at /dashboard.",
    });
  });

  it("200 concurrent requests against a balance for exactly 100: 100 charged, 100 get 402, never below 0; a render that ran out of time is refunded", async () => {
    // A stack of its own: 100 renders queued on the shared one would hold up every other file's
    // renders for half a minute (they time out, or fail for want of a browser slot).
    const stack = await startDev();
    try {
      const account = await signup(uniqueEmail("flood"), stack.info.baseUrl);
      admin(stack.localDir, "credit", account.email, "0.25"); // 250,000 + 250,000 = 100 screenshots at 5,000
      admin(stack.localDir, "limit", account.email, "1000", "1000");
      const responses = await Promise.all(
        Array.from({ length: 200 }, () =>
          fetch(`${stack.info.baseUrl}/api/v1/html-to-screenshot`, {
            method: "POST",
            headers: { "content-type": "application/json", ...auth(account.api_key) },
            body: JSON.stringify(tinyHtml),
          }),
        ),
      );
      const statuses = responses.map((r) => r.status);
      // All 200 are charged at once; 100 renders then queue for the browser, and on a slow machine
      // the last of them may run out of the request's time (504, refunded). Nothing else may happen.
      const rendered = statuses.filter((s) => s === 200).length;
      const timedOut = statuses.filter((s) => s === 504).length;
      expect(statuses.filter((s) => s === 402)).toHaveLength(100);
      expect(rendered + timedOut).toBe(100);
      expect(rendered).toBeGreaterThan(0);
      // The renders that ran out of time all refund at once, at the deadline, and an answer waits for
      // its refund at most 1.5 s (lib/http/access.ts, AFTER_WORK_MS): under this flood the last refunds
      // may land just after their 504s. They must land, and nothing else may change.
      const ledger = async () => {
        const charges = (await allUsageEntries(account.account_id, stack.info)).filter((e) => e.kind === "charge");
        return {
          charged: charges.filter((e) => e.status === "charged").length,
          refunded: charges.filter((e) => e.status === "refunded").length,
          charges: charges.length,
          balance: (await usage(account.api_key, stack.info.baseUrl)).balance_micro_usd,
        };
      };
      await expect.poll(ledger, { timeout: 15_000, interval: 500 }).toEqual({ charged: rendered, refunded: timedOut, charges: 100, balance: 5_000 * timedOut });
    } finally {
      await stack.stop();
    }
  }, 180_000);

  it("rate-limits 11 requests in one second on a key limited to 10, and never charges the refused ones", async () => {
    const account = await signup();
    admin(localDirOfSharedStack(), "limit", account.email, "10");
    // Start at the beginning of a second so all 11 land in one window.
    await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 20));
    const responses = await Promise.all(Array.from({ length: 11 }, () => postJson("/api/v1/html-to-screenshot", tinyHtml, auth(account.api_key))));
    const limited = responses.filter((r) => r.status === 429);
    expect(limited.length).toBeGreaterThanOrEqual(1);
    expect(limited[0]!.headers.get("retry-after")).toBe("1");
    expect(((await limited[0]!.json()) as ErrorBody).error.code).toBe("RATE_LIMITED");
    const ok = responses.filter((r) => r.status === 200).length;
    expect(ok + limited.length).toBe(11);
    // The next second's window is fresh again.
    await new Promise((r) => setTimeout(r, 1100));
    expect((await usage(account.api_key)).balance_micro_usd).toBe(250_000 - ok * 5_000);
  });

  it("shows an operator's credit in usage as a top-up", async () => {
    const account = await signup();
    const output = admin(localDirOfSharedStack(), "credit", account.email, "5");
    expect(output).toContain(`credited $5.00 to ${account.email}`);
    const report = await usage(account.api_key);
    expect(report.balance_micro_usd).toBe(5_250_000);
    expect(report.balance_cents).toBe(525);
    expect(report.recent_usage[0]).toMatchObject({ kind: "topup", endpoint: "admin", amount_micro_usd: 5_000_000, status: "credited" });
  });

  it("finds an account without the address's bonus by its id (an email names the account that received it)", async () => {
    const first = await signup();
    const second = await signup(first.email);
    expect(admin(localDirOfSharedStack(), "credit", second.account_id, "1")).toContain(`credited $1.00 to ${first.email}`);
    expect((await usage(second.api_key)).balance_micro_usd).toBe(1_000_000);
    expect((await usage(first.api_key)).balance_micro_usd).toBe(250_000);
    expect(() => admin(localDirOfSharedStack(), "show", "nobody-at-all@billing.test")).toThrow(/no account received the signup bonus of/);
  });
});

describe("persistence", () => {
  it("keeps balances across a restart of npm run dev (state under .local/)", async () => {
    const { mkdtempSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const path = await import("node:path");
    const localDir = mkdtempSync(path.join(tmpdir(), "shotline-persist-"));
    try {
      const env = { LOCAL_DIR: localDir, LOCAL_EPHEMERAL: "0" };
      const first = await startDev(env);
      const account = await signup(uniqueEmail("persist"), first.info.baseUrl);
      const shot = await fetch(`${first.info.baseUrl}/api/v1/html-to-screenshot`, {
        method: "POST",
        headers: { "content-type": "application/json", ...auth(account.api_key) },
        body: JSON.stringify(tinyHtml),
      });
      expect(shot.status).toBe(200);
      expect(await first.stop()).toBe(0);
      const second = await startDev(env);
      try {
        const report = await usage(account.api_key, second.info.baseUrl);
        expect(report.balance_micro_usd).toBe(245_000);
        expect(report.recent_usage.map((e) => e.kind)).toEqual(["charge", "bonus"]);
      } finally {
        await second.stop();
      }
    } finally {
      rmSync(localDir, { recursive: true, force: true });
    }
  }, 120_000);
});

/** The shared stack's state folder (for the admin CLI), from where its dev.json lives. */
function localDirOfSharedStack(): string {
  return inject("localDir");
}
