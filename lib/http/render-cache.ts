import { createHash } from "node:crypto";
import { type CacheEntry, completeRender, lookupRender, readCacheEntry, releaseRender } from "../billing/render-cache.js";
import type { Deadline } from "../deadline.js";
import { describeError, log } from "../log.js";
import type { Capture } from "../render/capture.js";
import { loadStored, storeCachedOutput } from "../storage/outputs.js";
import { canonical } from "./idempotency.js";

// The render cache (docs/api.md, "Render cache"): a request with `cacheTtl` is answered from a
// stored output of the same request by the same customer when one is fresh, else rendered and
// stored. Access control opens the slot before anything is charged (a hit costs an API key
// nothing); the handler renders through it. Concurrent misses: the first takes a lease and renders;
// the others wait for its output (a hit) until the lease ends or their own time would run short,
// then render without storing. A leader's output is uploaded while it works but published (made a
// hit) only once its charge is final (delivered, or the x402 payment settled: lib/http/access.ts):
// a render that ends refunded, however late, is never a free hit afterwards.

/** A request's place in the cache: a hit to answer, a render to store, or a render that passes by. */
export type CacheSlot =
  | { readonly state: "hit"; readonly entry: CacheEntry }
  | { readonly state: "lead"; readonly hash: string; readonly requestId: string; readonly ttl: number; stored?: StoredRender }
  | { readonly state: "pass" };

/** A leader's output, uploaded and waiting to be published. */
interface StoredRender {
  readonly objectKey: string;
  readonly meta: Record<string, unknown>;
  readonly body: Buffer;
}

/** What a request with a cache says of itself: who it is for, what it asks, and how long to keep it. */
export interface CacheRequest {
  readonly routeId: string;
  /** The customer: an account id, or an x402 payer's address (lower case). Caches are never shared between customers. */
  readonly scope: string;
  readonly body: { readonly cacheTtl?: number; readonly responseFormat?: unknown } & Record<string, unknown>;
  readonly requestId: string;
  /** Until when a lease holds (epoch ms): this request's deadline. */
  readonly leaseUntil: number;
  readonly deadline: Deadline;
}

/**
 * Cached outputs this instance stored or read lately, by object key, newest last: an object never
 * changes (its key is a new UUID), so a hit on this instance skips S3. Freshness is still the
 * index's to say. Bounded in bytes; outputs over a quarter of it are not kept.
 */
const recent = new Map<string, Buffer>();
const RECENT_MAX_BYTES = 32 * 1024 * 1024;
let recentBytes = 0;

function remember(objectKey: string, body: Buffer): Buffer {
  if (body.length > RECENT_MAX_BYTES / 4 || recent.has(objectKey)) return body;
  recent.set(objectKey, body);
  recentBytes += body.length;
  for (const [key, old] of recent) {
    if (recentBytes <= RECENT_MAX_BYTES) break;
    recent.delete(key);
    recentBytes -= old.length;
  }
  return body;
}

/** Time a follower keeps for its own render if the leader's output does not come. */
const RENDER_RESERVE_MS = 12_000;
const POLL_MS = 100;

/**
 * The cache key: the customer, the route and every field that changes the output (the validated
 * body with its defaults, `cacheKey` included; how the answer is delivered and the TTL left out).
 */
export function cacheHashOf(routeId: string, scope: string, body: Record<string, unknown>): string {
  const { responseFormat: _, cacheTtl: __, ...asked } = body;
  return createHash("sha256")
    .update(`${routeId}\n${scope}\n${canonical(asked)}`)
    .digest("hex");
}

/** Opens the request's slot, or null when it asks for no cache. A cache that does not answer is passed by (the request renders). */
export async function openCache(request: CacheRequest): Promise<CacheSlot | null> {
  const ttl = request.body.cacheTtl ?? 0;
  if (ttl <= 0) return null;
  return slotFor(request, ttl).catch((error: unknown) => {
    log.warn("render cache lookup failed; rendering without it", { requestId: request.requestId, error: describeError(error) });
    return { state: "pass" } as const;
  });
}

async function slotFor(request: CacheRequest, ttl: number): Promise<CacheSlot> {
  const hash = cacheHashOf(request.routeId, request.scope, request.body);
  const found = await lookupRender(hash, request.requestId, request.leaseUntil);
  if (found.kind === "hit") return { state: "hit", entry: found.entry };
  if (found.kind === "lead") return { state: "lead", hash, requestId: request.requestId, ttl };
  // Another request renders it: wait for its output while the lease holds and time is left.
  const waitUntil = Math.min(found.leaseUntil, request.deadline.at - RENDER_RESERVE_MS);
  while (Date.now() + POLL_MS < waitUntil && !request.deadline.signal.aborted) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    const entry = await readCacheEntry(hash);
    if (entry) return { state: "hit", entry };
  }
  return { state: "pass" };
}

/** The capture a request answers with: the cached one (X-Cache: HIT, Age), or `render`'s (stored when this request leads). */
export async function renderThrough(slot: CacheSlot | null, render: () => Promise<Capture>): Promise<{ capture: Capture; headers: Record<string, string> }> {
  if (slot?.state === "hit") {
    const { entry } = slot;
    // An object that cannot be read (S3 failing) is rendered again rather than failing a request that was promised a hit.
    const body =
      recent.get(entry.objectKey) ??
      (await loadStored(entry.objectKey).then(
        (read) => remember(entry.objectKey, read),
        (error: unknown) => {
          log.warn("could not read a cached render; rendering it again", { objectKey: entry.objectKey, error: describeError(error) });
          return null;
        },
      ));
    if (body) {
      const capture = { ...(entry.meta as Omit<Capture, "body">), body };
      return { capture, headers: { "X-Cache": "HIT", Age: String(Math.max(0, Math.floor((Date.now() - entry.storedAt) / 1000))) } };
    }
    return { capture: await render(), headers: { "X-Cache": "MISS" } };
  }
  const capture = await render();
  // A page captured as it stood at the limit is not kept: the next request tries it again.
  if (slot?.state === "lead") await (capture.incomplete ? closeCache(slot) : upload(slot, capture));
  return { capture, headers: slot ? { "X-Cache": "MISS" } : {} };
}

/** Uploads the leader's output, to be published once its charge is final; a failure is logged and the answer goes out uncached. */
async function upload(slot: Extract<CacheSlot, { state: "lead" }>, capture: Capture): Promise<void> {
  try {
    const { body, ...meta } = capture;
    slot.stored = { objectKey: await storeCachedOutput(body, capture.contentType, slot.ttl), meta, body };
  } catch (error) {
    log.warn("could not store a render in the cache", { requestId: slot.requestId, error: describeError(error) });
    await closeCache(slot);
  }
}

/** Once the request's charge is final: the uploaded output becomes the cache's entry (later requests hit). Never throws. */
export async function publishCache(slot: CacheSlot | null): Promise<void> {
  if (slot?.state !== "lead" || !slot.stored) return;
  const { objectKey, meta, body } = slot.stored;
  try {
    await completeRender(slot.hash, slot.requestId, objectKey, meta, slot.ttl);
    remember(objectKey, body);
  } catch (error) {
    log.warn("could not publish a render in the cache", { requestId: slot.requestId, error: describeError(error) });
    await closeCache(slot);
  }
}

/** After a failed request: a lease it held is given up, so the next request renders. Never throws. */
export async function closeCache(slot: CacheSlot | null): Promise<void> {
  if (slot?.state !== "lead") return;
  await releaseRender(slot.hash, slot.requestId).catch((error: unknown) =>
    log.warn("could not release a render cache lease", { requestId: slot.requestId, error: describeError(error) }),
  );
}
