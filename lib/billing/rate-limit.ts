import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { config } from "../config.js";
import { documents } from "./dynamodb.js";
import { rateLimited } from "./errors.js";
import { rateWindowKey } from "./keys.js";

// Fixed windows (one second by default) kept in DynamoDB, so every Lambda instance counts against
// the same limit. Each window's key carries its second, so an expired window is never read again:
// TTL deletion (which DynamoDB does lazily, up to days later) only tidies up.
//
// Leases: one write per request is most of what a cheap request costs (a metadata request, a cache
// hit). So an instance that was busy under a subject in its previous window takes several tokens of
// the shared window at once, as many as it used then, at most a tenth of the limit, and spends them
// here without writing. The shared count never lets more than the limit through in a window (every
// token served was counted); the price is that tokens an instance took and did not use are lost to
// the others until the window ends: at most a tenth of the limit per busy instance, and nothing for
// a quiet one (it takes one token at a time, as before). Limits under 20 are never leased. Requests
// arriving together wait for one lease rather than each take their own, and once the shared count
// has reached the limit the rest of the window is refused here without a write.
const TTL_AFTER_WINDOW_SECONDS = 120;
const LEASE_SHARE = 10;
// Windows this instance remembers (least recently counted forgotten first).
const MAX_WINDOWS = 10_000;

/** What is left of a limit's window after a request counted: requests, and seconds until the window ends. */
export interface RateCount {
  readonly remaining: number;
  readonly resetSeconds: number;
}

/** A subject's window as this instance sees it. */
interface Window {
  /** Tokens taken from the shared count and not used yet. */
  left: number;
  /** The shared count up to this instance's last token (what the others had used, and ours). */
  sharedCount: number;
  /** Requests this instance served in the window. */
  used: number;
  /** The shared count reached the limit: every later request of the window is refused without a write. */
  full: boolean;
  /** A lease being taken: concurrent requests wait for it rather than take their own. */
  leasing: Promise<void> | null;
}

/** A limiter over the shared table, with its own leases (one per Lambda instance; tests make several). */
export class SharedRateLimiter {
  private readonly windows = new Map<string, Window>();

  /** Counts a request of `subject` in the current window; 429 (with Retry-After) when it exceeds `limit`. */
  async enforce(subject: string, limit: number, windowSeconds = 1, now = Date.now()): Promise<RateCount> {
    const windowStart = Math.floor(now / 1000 / windowSeconds) * windowSeconds;
    const resetSeconds = Math.max(1, Math.ceil(windowStart + windowSeconds - now / 1000));
    const window = this.window(`${subject}@${windowStart}`);
    for (;;) {
      if (window.left > 0) {
        window.left--;
        window.used++;
        return { remaining: Math.max(0, limit - window.sharedCount + window.left), resetSeconds };
      }
      if (window.full) throw rateLimited(limit, windowSeconds, resetSeconds);
      window.leasing ??= this.lease(window, subject, limit, windowStart, windowSeconds).finally(() => {
        window.leasing = null;
      });
      await window.leasing;
    }
  }

  /** Takes tokens of the shared window: one, or as many as this instance used in the previous window (at most a tenth of the limit). */
  private async lease(window: Window, subject: string, limit: number, windowStart: number, windowSeconds: number): Promise<void> {
    const usedBefore = this.windows.get(`${subject}@${windowStart - windowSeconds}`)?.used ?? 0;
    const size = Math.max(1, Math.min(usedBefore, Math.floor(limit / LEASE_SHARE)));
    const { Attributes } = await documents.send(
      new UpdateCommand({
        TableName: config.TABLE_NAME,
        Key: rateWindowKey(subject, windowStart),
        UpdateExpression: "ADD #count :size SET expiresAt = if_not_exists(expiresAt, :expires)",
        ExpressionAttributeNames: { "#count": "count" },
        ExpressionAttributeValues: { ":size": size, ":expires": windowStart + windowSeconds + TTL_AFTER_WINDOW_SECONDS },
        ReturnValues: "UPDATED_NEW",
      }),
    );
    const count = Number(Attributes?.count);
    if (!Number.isFinite(count)) throw new Error(`the rate-limit window of ${subject} answered no count`);
    // Of the tokens just taken, those still under the limit are ours.
    const granted = Math.max(0, Math.min(size, limit - (count - size)));
    window.full = count >= limit;
    window.sharedCount = count - size + granted;
    window.left += granted;
  }

  /** The window under `key` (subject@start), created empty; the least recently used are forgotten past MAX_WINDOWS. */
  private window(key: string): Window {
    const known = this.windows.get(key);
    if (known) {
      this.windows.delete(key);
      this.windows.set(key, known);
      return known;
    }
    const created: Window = { left: 0, sharedCount: 0, used: 0, full: false, leasing: null };
    this.windows.set(key, created);
    if (this.windows.size > MAX_WINDOWS) this.windows.delete(this.windows.keys().next().value!);
    return created;
  }
}

const limiter = new SharedRateLimiter();

/** Counts a request of `subject` in the current window with this instance's limiter; 429 (with Retry-After) when it exceeds `limit`. */
export const enforceRateLimit = (subject: string, limit: number, windowSeconds = 1, now = Date.now()): Promise<RateCount> =>
  limiter.enforce(subject, limit, windowSeconds, now);
