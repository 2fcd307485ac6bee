import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { DecryptCommand, GenerateDataKeyCommand, KMSClient } from "@aws-sdk/client-kms";
import { config } from "../config.js";
import { AppError } from "../errors.js";
import { recall, remember } from "../lru.js";

// Secrets at rest (docs/design.md, "Secrets at rest"): a value sealed with a data key of its own
// (AES-256-GCM), the data key kept wrapped by the stack's key: a KMS key on AWS (SECRETS_KEY_ID), a
// local key under `npm run dev` (SECRETS_LOCAL_KEY, made once into .local/secrets.key). Both are
// bound to a context (whose value it is: a job's item, a monitor), so a sealed value moved to
// another row does not open. Whoever deletes the wrapped key has deleted the value, wherever its
// sealed copies lie (a message, the bucket).

/** A sealed value: its data key as the stack's key wrapped it, and the value under that key (base64url). */
export interface Sealed {
  readonly key: string;
  readonly box: string;
}

interface KeyRing {
  /** A new data key: as it is, and wrapped. */
  newKey(context: string): Promise<{ plain: Buffer; wrapped: Buffer }>;
  /** The data key `wrapped` stands for. */
  openKey(wrapped: Buffer, context: string): Promise<Buffer>;
}

const IV_BYTES = 12;
const TAG_BYTES = 16;

/** `plain` under `key` (AES-256-GCM, `context` authenticated with it): iv, ciphertext, tag. */
function encrypt(key: Buffer, plain: Buffer, context: string): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv).setAAD(Buffer.from(context));
  return Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
}

/** What `encrypt` sealed, or a throw when the key, the context or a byte differs. */
function decrypt(key: Buffer, sealed: Buffer, context: string): Buffer {
  const decipher = createDecipheriv("aes-256-gcm", key, sealed.subarray(0, IV_BYTES)).setAAD(Buffer.from(context));
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
  return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)), decipher.final()]);
}

/** A key ring of KMS key `keyId`: one GenerateDataKey per sealed value, one Decrypt per opened one. */
export function kmsKeyRing(keyId: string, client: KMSClient): KeyRing {
  const encryptionContext = (context: string) => ({ shotline: context });
  return {
    async newKey(context) {
      const made = await client.send(new GenerateDataKeyCommand({ KeyId: keyId, KeySpec: "AES_256", EncryptionContext: encryptionContext(context) }));
      return { plain: Buffer.from(made.Plaintext!), wrapped: Buffer.from(made.CiphertextBlob!) };
    },
    async openKey(wrapped, context) {
      const opened = await client.send(new DecryptCommand({ KeyId: keyId, CiphertextBlob: wrapped, EncryptionContext: encryptionContext(context) }));
      return Buffer.from(opened.Plaintext!);
    },
  };
}

/** A key ring of a local key (32 bytes): data keys are wrapped with it as values are. */
export function localKeyRing(master: Buffer): KeyRing {
  return {
    async newKey(context) {
      const plain = randomBytes(32);
      return { plain, wrapped: encrypt(master, plain, context) };
    },
    async openKey(wrapped, context) {
      return decrypt(master, wrapped, context);
    },
  };
}

/** `keys` remembering the data keys it opened lately (a monitor's checks in a warm worker open its key once). */
function remembering(keys: KeyRing, max = 64): KeyRing {
  const opened = new Map<string, Buffer>();
  return {
    newKey: (context) => keys.newKey(context),
    async openKey(wrapped, context) {
      const id = `${context} ${wrapped.toString("base64url")}`;
      return recall(opened, id) ?? remember(opened, id, await keys.openKey(wrapped, context), max);
    },
  };
}

/** The stack's key ring: KMS when SECRETS_KEY_ID is set, else the local key; a deployment with neither keeps no secret. */
function stackKeyRing(): KeyRing {
  if (config.SECRETS_KEY_ID) {
    const client = new KMSClient({ region: config.AWS_REGION, ...(config.KMS_ENDPOINT ? { endpoint: config.KMS_ENDPOINT } : {}) });
    return remembering(kmsKeyRing(config.SECRETS_KEY_ID, client));
  }
  if (config.SECRETS_LOCAL_KEY) return remembering(localKeyRing(Buffer.from(config.SECRETS_LOCAL_KEY, "base64")));
  throw new AppError("INTERNAL_ERROR", "This deployment has no key to keep secrets with (SECRETS_KEY_ID or SECRETS_LOCAL_KEY).");
}

let ring: KeyRing | undefined;
const keyRing = (): KeyRing => {
  ring ??= stackKeyRing();
  return ring;
};

/** `value` (as JSON) sealed for `context` under a new data key. */
export async function seal(value: unknown, context: string, keys: KeyRing = keyRing()): Promise<Sealed> {
  const { plain, wrapped } = await keys.newKey(context);
  return { key: wrapped.toString("base64url"), box: encrypt(plain, Buffer.from(JSON.stringify(value)), context).toString("base64url") };
}

/** The value `sealed` holds; a throw when it was not sealed for `context` or was changed. */
export async function unseal<T>(sealed: Sealed, context: string, keys: KeyRing = keyRing()): Promise<T> {
  const key = await keys.openKey(Buffer.from(sealed.key, "base64url"), context);
  return JSON.parse(decrypt(key, Buffer.from(sealed.box, "base64url"), context).toString("utf8")) as T;
}
