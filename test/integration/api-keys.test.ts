// API keys through the stack and DynamoDB Local: an account's keys made (shown once), listed by
// their ends, used, revoked (401 within the authentication cache's bound), at most ten, never the
// last; a key from before keys were listed finds its place in the list when it is used; the
// operator's CLI revokes a key named as lists show it.
import { createHash } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DeleteCommand, DynamoDBDocumentClient, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, inject, it } from "vitest";
import { admin } from "../../dev/harness/dev-process.js";
import { LOCAL_CREDENTIALS } from "../../dev/ports.js";
import { AUTH_CACHE_MS, MAX_API_KEYS } from "../../lib/billing/api-keys.js";
import { type ErrorBody, postJson } from "../helpers/api.js";
import { getItem } from "../helpers/ledger.js";

const base = inject("baseUrl");
type Listed = { id: string; name: string | null; start: string; end: string; created_at: string; last_used_at: string | null };
let counter = 0;

async function signup() {
  const res = await postJson("/api/v1/signup", { email: `keys-${Date.now()}-${counter++}@keys.test` }, {});
  const body = (await res.json()) as { api_key: string; account_id: string };
  return { key: body.api_key, accountId: body.account_id };
}
const auth = (key: string) => ({ authorization: `Bearer ${key}` });
const list = async (key: string) => {
  const res = await fetch(`${base}/api/v1/api-keys`, { headers: auth(key) });
  return { res, text: await res.clone().text(), keys: res.ok ? ((await res.json()) as { api_keys: Listed[] }).api_keys : [] };
};
const create = (key: string, body?: unknown) =>
  fetch(`${base}/api/v1/api-keys`, {
    method: "POST",
    headers: body === undefined ? auth(key) : { ...auth(key), "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
const revoke = (key: string, id: string) => fetch(`${base}/api/v1/api-keys/${encodeURIComponent(id)}`, { method: "DELETE", headers: auth(key) });
const usage = (key: string) => fetch(`${base}/api/v1/usage`, { headers: auth(key) });

describe("API keys", () => {
  it("the signup key is listed by its ends; another is made, shown once, named, and works on the same account", async () => {
    const { key } = await signup();
    const first = await list(key);
    expect(first.res.status).toBe(200);
    expect(first.res.headers.get("cache-control")).toBe("no-store");
    // The list's own use of the key is noted beside the request, so it may not show yet.
    expect(first.keys.map(({ last_used_at: _, ...rest }) => rest)).toEqual([
      { id: expect.stringMatching(/^key_/), name: null, start: key.slice(0, 13), end: key.slice(-4), created_at: expect.any(String) },
    ]);
    const made = await create(key, { name: "CI" });
    expect(made.status).toBe(201);
    const created = (await made.json()) as Listed & { api_key: string };
    expect(created).toMatchObject({ name: "CI", start: created.api_key.slice(0, 13), end: created.api_key.slice(-4) });
    expect((await usage(created.api_key)).status).toBe(200);
    const both = await list(created.api_key);
    expect(both.keys.map((k) => k.name)).toEqual([null, "CI"]);
    // A list never holds a whole key.
    expect(both.text).not.toContain(key);
    expect(both.text).not.toContain(created.api_key);
    // Used keys say when (to the minute), once the note lands.
    let listed = both.keys;
    for (let waited = 0; listed.some((k) => k.last_used_at === null) && waited < 10_000; waited += 200) {
      await sleep(200);
      listed = (await list(key)).keys;
    }
    for (const k of listed) expect(k.last_used_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d$/);
  });

  it("a name is 1 to 64 characters; a body sent as a form is 415; without a key, 401", async () => {
    const { key } = await signup();
    for (const name of ["", "x".repeat(65), 5]) {
      const res = await create(key, { name });
      expect(res.status, JSON.stringify(name)).toBe(400);
      expect(((await res.json()) as ErrorBody).error.code).toBe("INVALID_PARAMS");
    }
    const form = await fetch(`${base}/api/v1/api-keys`, {
      method: "POST",
      headers: { ...auth(key), "content-type": "application/x-www-form-urlencoded" },
      body: "name=x",
    });
    expect(form.status).toBe(415);
    expect((await fetch(`${base}/api/v1/api-keys`)).status).toBe(401);
    expect((await list(key)).keys).toHaveLength(1);
  });

  it(`at most ${MAX_API_KEYS} an account, however many are asked for at once`, async () => {
    const { key } = await signup();
    const made = await Promise.all(Array.from({ length: MAX_API_KEYS + 3 }, () => create(key)));
    const statuses = made.map((res) => res.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(MAX_API_KEYS - 1);
    const refused = made.filter((res) => res.status === 409);
    expect(refused).toHaveLength(4);
    expect(((await refused[0]!.json()) as ErrorBody).error.code).toBe("TOO_MANY_API_KEYS");
    expect((await list(key)).keys).toHaveLength(MAX_API_KEYS);
  }, 60_000);

  it(`a revoked key answers 401 within ${AUTH_CACHE_MS / 1000} s; the last key stays; another account's key is not found`, async () => {
    const { key } = await signup();
    const other = (await (await create(key)).json()) as { api_key: string; id: string };
    expect((await usage(other.api_key)).status).toBe(200); // known to this instance now
    expect((await revoke(key, other.id)).status).toBe(200);
    const revokedAt = Date.now();
    while ((await usage(other.api_key)).status !== 401) {
      expect(Date.now() - revokedAt, "still accepted").toBeLessThan(AUTH_CACHE_MS + 10_000);
      await sleep(100);
    }
    expect((await list(key)).keys.map((k) => k.id)).not.toContain(other.id);
    const [last] = (await list(key)).keys;
    const refused = await revoke(key, last!.id);
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as ErrorBody).error.code).toBe("LAST_API_KEY");
    expect((await usage(key)).status).toBe(200);
    const stranger = await signup();
    expect((await revoke(stranger.key, last!.id)).status).toBe(404);
    expect((await revoke(key, "key_nothing")).status).toBe(404);
    expect((await revoke(key, "x".repeat(2_000))).status).toBe(404);
  }, 30_000);

  it("two revocations at once cannot take an account's last two keys", async () => {
    const { key } = await signup();
    const other = (await (await create(key)).json()) as { api_key: string; id: string };
    const ids = (await list(key)).keys.map((k) => k.id);
    const answers = await Promise.all(ids.map((id, i) => revoke(i === 0 ? other.api_key : key, id)));
    expect(answers.map((res) => res.status).sort()).toEqual([200, 409]);
    const survivor = answers[0]!.status === 200 ? other.api_key : key;
    expect((await list(survivor)).keys).toHaveLength(1);
  });

  it("a key made before keys were listed takes its place in the list when it is used", async () => {
    const { key, accountId } = await signup();
    // As a signup before this change left it: the key's item without an id, no list, no count.
    const stack = inject("devInfo");
    const documents = DynamoDBDocumentClient.from(
      new DynamoDBClient({ region: stack.region, endpoint: stack.dynamodbEndpoint, credentials: LOCAL_CREDENTIALS }),
    );
    const keyPk = `KEY#${createHash("sha256").update(key).digest("hex")}`;
    const { id } = (await list(key)).keys[0]!;
    await documents.send(new DeleteCommand({ TableName: stack.tableName, Key: { pk: `ACCT#${accountId}`, sk: `APIKEY#${id}` } }));
    await documents.send(new UpdateCommand({ TableName: stack.tableName, Key: { pk: keyPk, sk: "KEY" }, UpdateExpression: "REMOVE keyId" }));
    await documents.send(new UpdateCommand({ TableName: stack.tableName, Key: { pk: `ACCT#${accountId}`, sk: "ACCT" }, UpdateExpression: "REMOVE apiKeys" }));
    // Used (after the instance forgot it), it is listed again, under a new id, by its ends.
    await sleep(AUTH_CACHE_MS);
    let keys: Listed[] = [];
    for (let waited = 0; keys.length === 0 && waited < 10_000; waited += 200) {
      keys = (await list(key)).keys;
      if (keys.length === 0) await sleep(200);
    }
    expect(keys).toEqual([expect.objectContaining({ start: key.slice(0, 13), end: key.slice(-4), name: null })]);
    expect((await getItem(keyPk, "KEY"))?.keyId).toBe(keys[0]!.id);
    // And it counts: nine more, not ten.
    const made = await Promise.all(Array.from({ length: MAX_API_KEYS }, () => create(key)));
    expect(made.filter((res) => res.status === 201)).toHaveLength(MAX_API_KEYS - 1);
  }, 60_000);

  it("the operator revokes a key named as lists show it; a name that matches none is an error", async () => {
    const { key } = await signup();
    const spare = (await (await create(key, { name: "leaked" })).json()) as Listed & { api_key: string };
    const out = admin(inject("localDir"), "revoke-key", `${spare.start}…${spare.end}`);
    expect(out).toMatch(/^revoked shl_live_.{4}….{4} \(key_[^,]+, "leaked"\) of keys-/);
    let status = 200;
    for (let waited = 0; status !== 401 && waited < AUTH_CACHE_MS + 10_000; waited += 200) {
      status = (await usage(spare.api_key)).status;
      if (status !== 401) await sleep(200);
    }
    expect(status).toBe(401);
    expect(() => admin(inject("localDir"), "revoke-key", "shl_live_nope")).toThrow(/no API key/);
  }, 30_000);
});
