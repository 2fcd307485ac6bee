// Secrets at rest (docs/api.md, "Monitors", secrets at rest) through the local stack: the
// credentials a job's items and a monitor send their pages are sent to the pages, and are nowhere
// in the table, the bucket (s3rver's files) or the log in the clear. An item's are deleted when it
// ends; a monitor's stay sealed, opened by its checks alone.
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { CreateBucketCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { describe, expect, inject, it } from "vitest";
import { admin, fundedKey } from "../../dev/harness/dev-process.js";
import { PROXY_PASSWORD, PROXY_USER } from "../../dev/harness/proxies.js";
import { LOCAL_CREDENTIALS } from "../../dev/ports.js";
import { type ErrorBody, postJson } from "../helpers/api.js";
import { putItem, scanTable } from "../helpers/ledger.js";

const base = inject("baseUrl");
const fixture = (p: string) => `${inject("fixtureUrl")}${p}`;
let counter = 0;
const account = () => fundedKey(base, inject("localDir"), `sealed-${Date.now()}-${counter++}@sealed.test`, 10);
const auth = (key: string) => ({ authorization: `Bearer ${key}` });
const runId = () => `sealed${Date.now()}x${counter++}`;

type Seen = { path: string; cookie: string; authorization: string; token: string }[];
const seenBy = async (id: string) => (await (await fetch(fixture(`/logs/seen?id=${id}`))).json()) as Seen;

/** Check `checkId` of monitor `monitorId` once it is done (or after a minute, as it then is). */
async function checkDone(key: string, monitorId: string, checkId: string): Promise<{ status: string; outcome?: string } | undefined> {
  for (const end = Date.now() + 60_000; ; await sleep(250)) {
    const { checks } = (await (await fetch(`${base}/api/v1/monitors/${monitorId}/checks`, { headers: auth(key) })).json()) as {
      checks: { id: string; status: string; outcome?: string }[];
    };
    const check = checks.find((c) => c.id === checkId);
    if (check?.status === "done" || Date.now() > end) return check;
  }
}

type JobRead = { status: string; items: { status: string; upload?: unknown; result?: { url?: string }; error?: { message: string } }[] };

/** Job `id` once it has completed (or after 90 s, as it then is). */
async function jobDone(key: string, id: string): Promise<JobRead | undefined> {
  let job: JobRead | undefined;
  for (const end = Date.now() + 90_000; Date.now() < end; await sleep(250)) {
    job = (await (await fetch(`${base}/api/v1/jobs/${id}`, { headers: auth(key) })).json()) as JobRead;
    if (job.status === "completed") break;
  }
  return job;
}

/** Every file s3rver keeps for the stack's bucket (its objects and their metadata), read whole. */
function bucketFiles(dir = path.join(inject("localDir"), "s3")): Buffer[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    return statSync(file).isDirectory() ? bucketFiles(file) : [readFileSync(file)];
  });
}

/** Where `secrets` stand in the clear: the table's rows, the bucket's files, the stack's log. */
async function inTheClear(secrets: readonly string[]): Promise<string[]> {
  const rows = (await scanTable()).map((row) => JSON.stringify(row));
  const files = bucketFiles();
  const log = readFileSync(path.join(inject("localDir"), "dev.log"), "utf8");
  return secrets.flatMap((secret) => [
    ...rows.filter((row) => row.includes(secret)).map((row) => `table: ${secret} in ${row.slice(0, 120)}`),
    ...(files.some((file) => file.includes(secret)) ? [`bucket: ${secret}`] : []),
    ...(log.includes(secret) ? [`log: ${secret}`] : []),
  ]);
}

describe("secrets at rest", () => {
  it("a job's items: their headers, cookies, basic auth, proxy password and upload URL reach the page sealed, and are deleted as each ends", async () => {
    const key = await account();
    const id = runId();
    const customer = new S3Client({ endpoint: inject("customerS3"), region: "us-east-1", forcePathStyle: true, credentials: LOCAL_CREDENTIALS });
    const bucket = `sealed-${Date.now()}`;
    await customer.send(new CreateBucketCommand({ Bucket: bucket }));
    const upload = await getSignedUrl(customer, new PutObjectCommand({ Bucket: bucket, Key: "shot.png" }), { expiresIn: 600 });
    const signature = new URL(upload).searchParams.get("X-Amz-Signature")!;
    // Short ones too: a 2-character value is as secret as the rest.
    const SECRETS = ["JOBCOOKIE314", "JOBHEADER159", "JOBPASS265", signature];
    const secrets = {
      cookies: [{ name: "session", value: "JOBCOOKIE314" }],
      headers: { "X-Api-Token": "JOBHEADER159" },
      httpAuth: { username: "ann", password: "JOBPASS265" },
    };
    const page = { url: fixture(`/logs/page?id=${id}`), width: 320, height: 240, deviceScaleFactor: 1, delay: 4000 };
    const res = await postJson(
      "/api/v1/jobs",
      {
        endpoint: "screenshot",
        items: [
          { ...page, ...secrets, upload: { url: upload } },
          { ...page, url: fixture(`/simple?id=${id}`), proxy: `http://${PROXY_USER}:${PROXY_PASSWORD}@127.0.0.1:${inject("proxyPorts").http}` },
        ],
      },
      auth(key),
    );
    const job = (await res.json()) as { id: string } & ErrorBody;
    expect(res.status, JSON.stringify(job)).toBe(202);
    // While the items wait or run (each takes its 4 s delay at least): each row holds the key to its own sealed request, and nothing holds a secret.
    const rows = (await scanTable()).filter((row) => row.pk === `JOB#${job.id}` && String(row.sk).startsWith("ITEM#"));
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      expect(row.status).not.toMatch(/succeeded|failed/);
      expect(typeof row.secretKey).toBe("string");
      expect(typeof (row.request as { sealed?: string }).sealed).toBe("string");
    }
    expect(await inTheClear([...SECRETS, PROXY_PASSWORD])).toEqual([]);

    const done = await jobDone(key, job.id);
    expect(
      done?.items.map((item) => item.status),
      JSON.stringify(done),
    ).toEqual(["succeeded", "succeeded"]);
    // The page was sent every secret, the upload went to the customer's bucket (its signature was opened too).
    const document = (await seenBy(id)).find((r) => r.path === "/logs/page")!;
    expect(document.cookie).toContain("session=JOBCOOKIE314");
    expect(document.token).toBe("JOBHEADER159");
    expect(document.authorization).toBe(`Basic ${Buffer.from("ann:JOBPASS265").toString("base64")}`);
    expect(done?.items[0]?.upload).toEqual({ status: "uploaded", http_status: 200 });
    // Ended, each item's key is gone: its sealed request (in its row, the message, the bucket) opens no more.
    const ended = (await scanTable()).filter((row) => row.pk === `JOB#${job.id}` && String(row.sk).startsWith("ITEM#"));
    expect(ended.map((row) => row.secretKey)).toEqual([undefined, undefined]);
    expect(await inTheClear([...SECRETS, PROXY_PASSWORD])).toEqual([]);
  }, 120_000);

  it("a cancelled item's secrets are deleted with it", async () => {
    const key = await account();
    const items = Array.from({ length: 12 }, () => ({
      url: fixture(`/simple?id=${runId()}`),
      width: 320,
      delay: 3000,
      headers: { "X-Api-Token": "JOBCANCEL777" },
    }));
    const res = await postJson("/api/v1/jobs", { endpoint: "screenshot", items }, auth(key));
    const job = (await res.json()) as { id: string };
    expect(res.status).toBe(202);
    const cancelled = await fetch(`${base}/api/v1/jobs/${job.id}`, { method: "DELETE", headers: auth(key) });
    expect(cancelled.status).toBe(200);
    const rows = (await scanTable()).filter((row) => row.pk === `JOB#${job.id}` && String(row.sk).startsWith("ITEM#"));
    // The account's share of the workers runs a few at once: the rest were cancelled before they started.
    const gone = rows.filter((row) => row.status === "cancelled");
    expect(gone.length).toBeGreaterThan(0);
    for (const row of gone) expect(row.secretKey).toBeUndefined();
    expect(await inTheClear(["JOBCANCEL777"])).toEqual([]);
  }, 60_000);

  it("a monitor's secrets stay sealed for its life: its checks send them, nothing stores or shows them in the clear", async () => {
    const key = await account();
    const id = runId();
    const SECRETS = ["MONSEALCOOKIE11", "MONSEALHEADER22", "MONSEALPASS33", "MONSEALURL44"];
    const res = await postJson(
      "/api/v1/monitors",
      {
        url: fixture(`/logs/page?id=${id}`).replace("://", "://ann:MONSEALURL44@"),
        every: "1d",
        width: 400,
        height: 300,
        mode: "text",
        cookies: [{ name: "session", value: "MONSEALCOOKIE11" }],
        headers: { "X-Api-Token": "MONSEALHEADER22" },
        httpAuth: { username: "ann", password: "MONSEALPASS33" },
      },
      auth(key),
    );
    const monitor = (await res.json()) as { id: string; first_check_id: string } & ErrorBody;
    expect(res.status, JSON.stringify(monitor)).toBe(201);
    const check = await checkDone(key, monitor.id, monitor.first_check_id);
    expect(check?.outcome).toBe("baseline");
    const document = (await seenBy(id)).find((r) => r.path === "/logs/page")!;
    expect(document.cookie).toContain("session=MONSEALCOOKIE11");
    expect(document.token).toBe("MONSEALHEADER22");
    expect(document.authorization).toBe(`Basic ${Buffer.from("ann:MONSEALPASS33").toString("base64")}`);
    // Its row keeps them sealed, with the key that opens them, for as long as it lives.
    const row = (await scanTable()).find((item) => item.sk === `MON#${monitor.id}`)!;
    expect(typeof row.sealed).toBe("string");
    expect(typeof row.secretKey).toBe("string");
    // A change that sends back what it was shown keeps them, sealed again.
    const patched = await fetch(`${base}/api/v1/monitors/${monitor.id}`, {
      method: "PATCH",
      headers: { ...auth(key), "content-type": "application/json" },
      body: JSON.stringify({ name: "still sealed", headers: { "X-Api-Token": "[redacted]" } }),
    });
    expect(patched.status).toBe(200);
    expect(JSON.stringify(await patched.json())).not.toMatch(/MONSEAL/);
    const after = (await scanTable()).find((item) => item.sk === `MON#${monitor.id}`)!;
    expect(after.secretKey).not.toBe(row.secretKey);
    expect(after.baseline).toEqual(row.baseline);
    expect(await inTheClear(SECRETS)).toEqual([]);
  }, 90_000);

  it("a monitor kept before secrets were sealed is sealed by the operator's migration, and its checks still send them", async () => {
    const key = await account();
    const id = runId();
    const secrets = { cookies: [{ name: "session", value: "MONLEGACYCOOKIE55" }], headers: { "X-Api-Token": "MONLEGACYHEADER66" } };
    const res = await postJson(
      "/api/v1/monitors",
      { url: fixture(`/logs/page?id=${id}`), every: "1d", width: 400, height: 300, mode: "text", ...secrets },
      auth(key),
    );
    const monitor = (await res.json()) as { id: string; first_check_id: string };
    expect(res.status).toBe(201);
    expect((await checkDone(key, monitor.id, monitor.first_check_id))?.status).toBe("done");
    // As a release before sealing stored it: the secrets in its request and options, in the clear.
    const stored = (await scanTable()).find((item) => item.sk === `MON#${monitor.id}`) as Record<string, unknown> & {
      pk: string;
      sk: string;
      request: object;
      options: object;
    };
    const { sealed: _, secretKey: __, ...legacy } = stored;
    await putItem({ ...legacy, request: { ...stored.request, ...secrets }, options: { ...stored.options, ...secrets } });
    expect((await inTheClear(["MONLEGACYHEADER66"])).length).toBeGreaterThan(0);
    const migrated = admin(inject("localDir"), "seal-monitors");
    expect(migrated).toMatch(/sealed [1-9]\d*$/m);
    expect(await inTheClear(["MONLEGACYCOOKIE55", "MONLEGACYHEADER66"])).toEqual([]);
    // Run again: nothing left to seal for it, nothing lost.
    admin(inject("localDir"), "seal-monitors");
    const checked = await fetch(`${base}/api/v1/monitors/${monitor.id}/check`, { method: "POST", headers: auth(key) });
    const { check_id } = (await checked.json()) as { check_id: string };
    expect(checked.status).toBe(202);
    const { status } = (await checkDone(key, monitor.id, check_id))!;
    expect(status).toBe("done");
    const sent = (await seenBy(id)).filter((r) => r.path === "/logs/page");
    expect(sent).toHaveLength(2);
    for (const request of sent) {
      expect(request.cookie).toContain("session=MONLEGACYCOOKIE55");
      expect(request.token).toBe("MONLEGACYHEADER66");
    }
  }, 90_000);

  it("a content job of a page whose URL holds a password: the answer, its links, its error and the log say the URL without it", async () => {
    const key = await account();
    const id = runId();
    const withPassword = (p: string) => fixture(p).replace("://", "://ann:URLPASS4711@");
    const res = await postJson(
      "/api/v1/jobs",
      {
        endpoint: "content",
        items: [
          { url: withPassword(`/logs/page?id=${id}`), render: "never", format: "markdown" },
          { url: withPassword(`/not-found?id=${id}`), render: "never", format: "markdown" },
          { url: withPassword(`/logs/page?id=${id}`), render: "always", format: "markdown" },
        ],
      },
      auth(key),
    );
    const job = (await res.json()) as { id: string } & ErrorBody;
    expect(res.status, JSON.stringify(job)).toBe(202);
    const done = await jobDone(key, job.id);
    expect(
      done?.items.map((item) => item.status),
      JSON.stringify(done),
    ).toEqual(["succeeded", "failed", "succeeded"]);
    // Every answer names the page without them.
    expect(done?.items[0]?.result?.url).toBe(fixture(`/logs/page?id=${id}`));
    expect(done?.items[1]?.error?.message).toContain(fixture(`/not-found?id=${id}`));
    expect(JSON.stringify(done)).not.toContain("URLPASS4711");
    expect(await inTheClear(["URLPASS4711"])).toEqual([]);
  }, 120_000);

  it("a monitor kept with a webhook password from before they were refused can still be changed, and the password not changed to another", async () => {
    const key = await account();
    const res = await postJson("/api/v1/monitors", { url: fixture(`/logs/page?id=${runId()}`), every: "1d", width: 400, height: 300, mode: "text" }, auth(key));
    const monitor = (await res.json()) as { id: string; first_check_id: string };
    expect(res.status).toBe(201);
    await checkDone(key, monitor.id, monitor.first_check_id);
    const patch = (body: unknown) =>
      fetch(`${base}/api/v1/monitors/${monitor.id}`, {
        method: "PATCH",
        headers: { ...auth(key), "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    // Kept before credentials in webhook URLs were refused: a change that leaves it alone still goes through.
    const row = (await scanTable()).find((item) => item.sk === `MON#${monitor.id}`)! as Record<string, unknown> & { pk: string; sk: string; request: object };
    await putItem({ ...row, request: { ...row.request, webhookUrl: fixture("/hooks/in").replace("://", "://hook:HOOKPASS99@") } });
    const paused = await patch({ paused: true });
    expect(paused.status, await paused.clone().text()).toBe(200);
    const refused = await patch({ webhookUrl: fixture("/hooks/in").replace("://", "://hook:HOOKPASS98@") });
    expect(refused.status).toBe(400);
  }, 90_000);

  it("a webhook URL with a password is refused: it would be a secret kept in the clear", async () => {
    const key = await account();
    for (const [route, body] of [
      ["/api/v1/jobs", { endpoint: "screenshot", items: [{ url: fixture("/simple") }], webhookUrl: "https://hook:HOOKPASS@example.com/in" }],
      ["/api/v1/monitors", { url: fixture("/simple"), webhookUrl: "https://hook:HOOKPASS@example.com/in" }],
    ] as const) {
      const res = await postJson(route, body, auth(key));
      const answer = (await res.json()) as ErrorBody;
      expect(res.status, route).toBe(400);
      expect(answer.error.code).toBe("INVALID_PARAMS");
      expect(answer.error.message).toContain("webhookUrl");
      expect(answer.error.message).toContain("must not hold a username or password");
    }
  });
});
