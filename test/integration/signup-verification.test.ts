// Signup with verification on, as every deployed stage runs it: the handlers in process against the
// shared stack's DynamoDB Local, the mail sent through the real SES v2 client to aws-ses-v2-local
// (a local SES from the registry that keeps what it is sent), and the link in the mail followed.

import { createHash } from "node:crypto";
import { paginateScan } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MailLocal, startMailLocal } from "../../dev/mail-local.js";
import { useSharedStackInProcess } from "../helpers/in-process.js";
import { invoke } from "../helpers/invoke.js";
import { getItem, setAttribute } from "../helpers/ledger.js";

type Handler = Parameters<typeof invoke>[0];
let mail: MailLocal;
let signupHandler: Handler;
let verifyHandler: Handler;
let usageHandler: Handler;
let documents: typeof import("../../lib/billing/dynamodb.js").documents;
let tableName: string;

beforeAll(async () => {
  mail = await startMailLocal("shotline-test-verify-email");
  useSharedStackInProcess({
    SIGNUP_VERIFICATION: "on",
    SES_ENDPOINT: mail.endpoint,
    MAIL_FROM: "signup@shotline.test",
    VERIFY_EMAIL_TEMPLATE: "shotline-test-verify-email",
    // Every invocation comes from 127.0.0.1: the limits are another test's business.
    SIGNUP_LIMIT_PER_HOUR: "1000",
    RATE_LIMIT_PER_SECOND: "1000",
  });
  signupHandler = (await import("../../functions/signup.js")).handler as Handler;
  verifyHandler = (await import("../../functions/verify-email.js")).handler as Handler;
  usageHandler = (await import("../../functions/usage.js")).handler as Handler;
  ({ documents } = await import("../../lib/billing/dynamodb.js"));
  tableName = (await import("../../lib/config.js")).config.TABLE_NAME;
});
afterAll(() => mail?.stop());

let counter = 0;
const address = (tag: string) => `${tag}-${Date.now()}-${counter++}@verify.test`;
const signup = (email: string, headers: Record<string, string> = {}) =>
  invoke(signupHandler, { method: "POST", path: "/api/v1/signup", body: JSON.stringify({ email }), headers });
const balanceOf = async (key: string) => {
  const res = await invoke(usageHandler, { method: "GET", path: "/api/v1/usage", headers: { authorization: `Bearer ${key}` } });
  const report = res.json();
  return { balance: report.balance_micro_usd as number, bonuses: (report.recent_usage as { kind: string }[]).filter((e) => e.kind === "bonus").length };
};
/** The links mailed to `to` so far, oldest first. */
const linksTo = async (to: string) =>
  (await mail.inbox())
    .filter((m) => m.destination.to.includes(to))
    .map((m) => /https?:\/\/\S+\/api\/v1\/verify-email\?token=[\w-]+/.exec(m.body.text ?? "")![0]);
const follow = async (link: string) => {
  const url = new URL(link);
  const res = await invoke(verifyHandler, { method: "GET", path: `${url.pathname}${url.search}`, headers: {} });
  return { status: res.status, headers: res.headers, html: Buffer.from(res.result.body ?? "", res.result.isBase64Encoded ? "base64" : "utf8").toString() };
};

describe("signup with verification on", () => {
  it("credits no bonus until the mailed link is followed, then once", async () => {
    const email = address("new");
    const res = await signup(email);
    expect(res.status).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({ balance_cents: 0, balance_micro_usd: 0, bonus: "pending_verification" });
    // The key works at once (for paid credit); the balance has no bonus yet.
    expect(await balanceOf(body.api_key)).toEqual({ balance: 0, bonuses: 0 });

    const [link, ...more] = await linksTo(email);
    expect(more).toEqual([]);
    const [caught] = (await mail.inbox()).filter((m) => m.destination.to.includes(email));
    expect(caught).toMatchObject({ from: "signup@shotline.test", subject: "Verify your address for Shotline" });
    expect(caught!.body.html).toContain(`href="${link}"`);
    // The link names the service's own origin (the invocation had no Host: the configured port on localhost).
    expect(link).toMatch(/^http:\/\/localhost:\d+\/api\/v1\/verify-email\?token=[\w-]{43}$/);

    const first = await follow(link!);
    expect(first.status).toBe(200);
    expect(first.headers["Content-Type"]).toBe("text/html; charset=utf-8");
    expect(first.headers["X-Content-Type-Options"]).toBe("nosniff");
    expect(first.headers["Content-Security-Policy"]).toContain("frame-ancestors 'none'");
    expect(first.html).toContain("Address verified");
    expect(first.html).toContain("50 screenshots");
    expect(await balanceOf(body.api_key)).toEqual({ balance: 250_000, bonuses: 1 });

    const again = await follow(link!);
    expect(again.status).toBe(404);
    expect(again.html).toContain("This link does not work");
    expect(await balanceOf(body.api_key)).toEqual({ balance: 250_000, bonuses: 1 });
  });

  it("answers a second signup of a known address exactly like a new one; its link verifies without a second bonus", async () => {
    const known = address("known");
    const firstKey = (await signup(known)).json().api_key as string;
    await follow((await linksTo(known))[0]!);
    expect((await balanceOf(firstKey)).balance).toBe(250_000);

    // The same person's other spelling (canonically the same address), and a stranger's new address.
    const [tagged, fresh] = [known.replace("@", "+again@"), address("fresh")];
    const [again, stranger] = await Promise.all([signup(tagged), signup(fresh)]);
    const shape = (res: Awaited<ReturnType<typeof signup>>) => {
      const { api_key, account_id, ...rest } = res.json();
      // Every header alike, but for the request's id and the limits' remaining counts (the same IP's signups).
      const headers = { ...res.headers, "X-Request-Id": "id", RateLimit: String(res.headers.RateLimit).replace(/r=\d+/g, "r=N") };
      return { status: res.status, headers, rest, key: /^shl_live_[\w-]{43}$/.test(api_key), account: typeof account_id };
    };
    expect(shape(again)).toEqual(shape(stranger));
    expect(shape(again).rest).toEqual({ balance_cents: 0, balance_micro_usd: 0, bonus: "pending_verification" });
    // Each got its own account and a mail; the known address's link verifies without a bonus.
    expect(again.json().account_id).not.toBe(stranger.json().account_id);
    const [knownLink] = await linksTo(tagged);
    const followed = await follow(knownLink!);
    expect(followed.status).toBe(200);
    expect(followed.html).toContain("already received its signup bonus");
    expect(await balanceOf(again.json().api_key)).toEqual({ balance: 0, bonuses: 0 });
    // The first account keeps what it has; the stranger's link still brings the bonus.
    expect((await balanceOf(firstKey)).balance).toBe(250_000);
    await follow((await linksTo(fresh))[0]!);
    expect((await balanceOf(stranger.json().api_key)).balance).toBe(250_000);
  });

  it("two accounts of one address following their links at once: one bonus between them", async () => {
    const email = address("race");
    const keys = [(await signup(email)).json().api_key, (await signup(email)).json().api_key] as string[];
    const links = await linksTo(email);
    expect(links).toHaveLength(2);
    const pages = await Promise.all(links.map(follow));
    expect(pages.map((p) => p.status)).toEqual([200, 200]);
    const balances = await Promise.all(keys.map(balanceOf));
    expect(balances.map((b) => b.balance).sort()).toEqual([0, 250_000]);
  });

  it("mails an address at most 3 times a day, and answers the signups past that the same", async () => {
    const email = address("flood");
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push((await signup(email)).json());
    expect(answers.map((a) => [a.bonus, a.balance_micro_usd])).toEqual(Array(5).fill(["pending_verification", 0]));
    expect(await linksTo(email)).toHaveLength(3);
  });

  it("sends a disposable address no mail, and gives it no bonus", async () => {
    const email = `throwaway-${Date.now()}@mailinator.com`;
    const res = await signup(email);
    expect(res.status).toBe(201);
    expect(res.json()).toMatchObject({ bonus: "none", balance_micro_usd: 0 });
    expect(await linksTo(email)).toEqual([]);
  });

  it("puts no Host of the client's choosing in the link", async () => {
    const email = address("host");
    await signup(email, { host: "evil.example" });
    const [link] = await linksTo(email);
    expect(new URL(link!).hostname).toBe("localhost");
  });

  it("refuses links that are malformed, unknown or expired, crediting nothing", async () => {
    const malformed = await invoke(verifyHandler, { method: "GET", path: "/api/v1/verify-email?token=abc", headers: {} });
    expect(malformed.status).toBe(400);
    expect(malformed.json().error.code).toBe("INVALID_PARAMS");
    const missing = await invoke(verifyHandler, { method: "GET", path: "/api/v1/verify-email", headers: {} });
    expect(missing.status).toBe(400);
    const unknown = await follow(`http://localhost/api/v1/verify-email?token=${"A".repeat(43)}`);
    expect(unknown.status).toBe(404);

    // A link past its 7 days (DynamoDB's TTL deletes lazily: the item may still be there).
    const email = address("expired");
    const key = (await signup(email)).json().api_key as string;
    const [link] = await linksTo(email);
    const token = new URL(link!).searchParams.get("token")!;
    const pk = `VERIFY#${createHash("sha256").update(token).digest("hex")}`;
    expect(await getItem(pk, "VERIFY")).toBeDefined();
    await setAttribute(pk, "VERIFY", "expiresAt", Math.floor(Date.now() / 1000) - 1);
    expect((await follow(link!)).status).toBe(404);
    expect(await balanceOf(key)).toEqual({ balance: 0, bonuses: 0 });
  });

  it("creates nothing when the mail cannot be sent, and says to try again", async () => {
    await mail.stop();
    const email = address("unsent");
    const res = await signup(email);
    expect(res.status).toBe(500);
    expect(res.json().error).toEqual({ code: "INTERNAL_ERROR", message: expect.stringContaining("no account was created") });
    // Every page of the table (a scan's filter applies page by page).
    const accounts = [];
    for await (const page of paginateScan(
      { client: documents },
      { TableName: tableName, FilterExpression: "begins_with(pk, :acct) AND email = :email", ExpressionAttributeValues: { ":acct": "ACCT#", ":email": email } },
    ))
      accounts.push(...(page.Items ?? []));
    expect(accounts).toEqual([]);
  });
});
