import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { KMSClient } from "@aws-sdk/client-kms";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kmsKeyRing, localKeyRing, seal, unseal } from "../../../lib/storage/sealed.js";

const secret = { headers: { Authorization: "Bearer tok-SEALED-1" }, httpAuth: { username: "ann", password: "hunter2-SEALED" } };

describe("secrets sealed at rest (local key)", () => {
  const ring = localKeyRing(randomBytes(32));

  it("opens for its own context, and its stored form holds no secret", async () => {
    const sealed = await seal(secret, "item job_a.0", ring);
    expect(await unseal(sealed, "item job_a.0", ring)).toEqual(secret);
    const stored = JSON.stringify(sealed);
    for (const value of ["tok-SEALED-1", "hunter2-SEALED", "Authorization", "ann"]) expect(stored).not.toContain(value);
    // Each value under a key of its own: the same secret sealed twice shares nothing.
    const again = await seal(secret, "item job_a.0", ring);
    expect(again.key).not.toBe(sealed.key);
    expect(again.box).not.toBe(sealed.box);
  });

  it("does not open for another row, with a changed byte, with another row's key, or under another stack's key", async () => {
    const sealed = await seal(secret, "item job_a.0", ring);
    await expect(unseal(sealed, "item job_a.1", ring)).rejects.toThrow();
    const box = Buffer.from(sealed.box, "base64url");
    box[box.length - 20]! ^= 1;
    await expect(unseal({ ...sealed, box: box.toString("base64url") }, "item job_a.0", ring)).rejects.toThrow();
    const other = await seal(secret, "item job_a.0", ring);
    await expect(unseal({ key: other.key, box: sealed.box }, "item job_a.0", ring)).rejects.toThrow();
    await expect(unseal(sealed, "item job_a.0", localKeyRing(randomBytes(32)))).rejects.toThrow();
  });
});

// AWS KMS itself cannot run here: a loopback server speaks its JSON protocol (TrentService, as the
// real SDK client sends it) for GenerateDataKey and Decrypt, its ciphertext blobs bound to the key
// id and the encryption context as KMS binds them.
describe("secrets sealed at rest (KMS, through the real SDK client)", () => {
  const KEY_ID = "arn:aws:kms:us-east-1:123456789012:key/11111111-2222-3333-4444-555555555555";
  const master = randomBytes(32);
  const calls: { target: string; body: Record<string, unknown> }[] = [];
  let server: Server;
  let client: KMSClient;

  const bound = (context: unknown) => Buffer.from(`${KEY_ID} ${JSON.stringify(context)}`);

  beforeAll(async () => {
    server = createServer((req, res) => {
      let raw = "";
      req.on("data", (chunk) => (raw += chunk));
      req.on("end", () => {
        const target = String(req.headers["x-amz-target"]);
        const body = JSON.parse(raw) as Record<string, unknown>;
        calls.push({ target, body });
        const answer = (status: number, json: unknown) => {
          res.writeHead(status, { "content-type": "application/x-amz-json-1.1" });
          res.end(JSON.stringify(json));
        };
        if (target === "TrentService.GenerateDataKey") {
          const plain = randomBytes(32);
          const iv = randomBytes(12);
          const cipher = createCipheriv("aes-256-gcm", master, iv).setAAD(bound(body.EncryptionContext));
          const blob = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
          return answer(200, { KeyId: KEY_ID, Plaintext: plain.toString("base64"), CiphertextBlob: blob.toString("base64") });
        }
        if (target === "TrentService.Decrypt") {
          try {
            const blob = Buffer.from(String(body.CiphertextBlob), "base64");
            const decipher = createDecipheriv("aes-256-gcm", master, blob.subarray(0, 12)).setAAD(bound(body.EncryptionContext));
            decipher.setAuthTag(blob.subarray(blob.length - 16));
            const plain = Buffer.concat([decipher.update(blob.subarray(12, blob.length - 16)), decipher.final()]);
            return answer(200, { KeyId: KEY_ID, Plaintext: plain.toString("base64") });
          } catch {
            return answer(400, { __type: "InvalidCiphertextException", message: "The ciphertext is invalid." });
          }
        }
        answer(400, { __type: "UnknownOperationException" });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    client = new KMSClient({
      region: "us-east-1",
      endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      credentials: { accessKeyId: "test", secretAccessKey: "test" },
    });
  });
  afterAll(() => {
    client.destroy();
    server.close();
  });

  it("seals under a data key KMS makes for the context, and opens it with one Decrypt", async () => {
    const ring = kmsKeyRing(KEY_ID, client);
    calls.length = 0;
    const sealed = await seal(secret, "monitor mon_1", ring);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({
      target: "TrentService.GenerateDataKey",
      body: { KeyId: KEY_ID, KeySpec: "AES_256", EncryptionContext: { shotline: "monitor mon_1" } },
    });
    // Nothing but the wrapped key goes to KMS: the secret is sealed here.
    expect(JSON.stringify(calls)).not.toContain("hunter2");
    expect(await unseal(sealed, "monitor mon_1", ring)).toEqual(secret);
    expect(calls.map((call) => call.target)).toEqual(["TrentService.GenerateDataKey", "TrentService.Decrypt"]);
    expect(calls[1]!.body).toMatchObject({ KeyId: KEY_ID, EncryptionContext: { shotline: "monitor mon_1" } });
  });

  it("a sealed value moved to another monitor does not open: KMS refuses the other context", async () => {
    const ring = kmsKeyRing(KEY_ID, client);
    const sealed = await seal(secret, "monitor mon_2", ring);
    await expect(unseal(sealed, "monitor mon_3", ring)).rejects.toThrow(/ciphertext is invalid/);
  });
});
