// One deadline per request, and one AbortSignal that fires at it (docs/design.md, "One deadline").

/** API Gateway HTTP APIs cut every integration at 30 s, counted from the request's arrival. */
const GATEWAY_LIMIT_MS = 30_000;

/** Time kept after the deadline to answer: a refund or a released payment, serialising the response. */
const ANSWER_RESERVE_MS = 2_000;
/** The last answer goes out this long before the gateway's or the Lambda's limit. */
const LAST_ANSWER_MARGIN_MS = 500;

/** Whichever ends first: the Lambda's remaining time, or the gateway's 30 s from the request's arrival. */
const hardLimit = (now: number, remainingMs: number, arrivedAt: number) => Math.min(now + remainingMs, arrivedAt + GATEWAY_LIMIT_MS);

/**
 * When a request must have answered, whatever still runs (epoch ms): whichever ends first, the
 * Lambda's remaining time or API Gateway's 30 s counted from `arrivedAt` (the event's
 * requestContext.timeEpoch: a cold start eats into it), less a margin.
 */
export const answerBy = (now: number, remainingMs: number, arrivedAt: number): number => hardLimit(now, remainingMs, arrivedAt) - LAST_ANSWER_MARGIN_MS;

/** When the work of a request must be done (epoch ms): ANSWER_RESERVE_MS before the hard limit, so the client always gets our JSON answer. */
export const requestDeadline = (now: number, remainingMs: number, arrivedAt: number): number => hardLimit(now, remainingMs, arrivedAt) - ANSWER_RESERVE_MS;

/** A signal that aborts at `deadline` with `reason`, or earlier with `abort`; `clear` stops its timer once the work is over. */
export function whenAborted(deadline: number, reason: Error): { signal: AbortSignal; clear: () => void; abort: (early: unknown) => void } {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(reason), Math.max(0, deadline - Date.now()));
  return { signal: controller.signal, clear: () => clearTimeout(timer), abort: (early) => controller.abort(early) };
}

/** Rejects with the signal's reason once it aborts (for a race against work that may ignore it). */
export function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
}

/**
 * `work`'s outcome, or, if `ms` pass first, `late()`'s (a value, or the error it throws); the timer
 * is cleared either way, and `work` failing after the time ran out is ignored.
 */
export async function orTimeout<T, U = T>(work: Promise<T>, ms: number, late: () => U): Promise<T | U> {
  work.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  const overtime = new Promise<U>((resolve, reject) => {
    timer = setTimeout(() => {
      try {
        resolve(late());
      } catch (error) {
        reject(error);
      }
    }, ms);
  });
  try {
    return await Promise.race([work, overtime]);
  } finally {
    clearTimeout(timer);
  }
}

/** What every lib call of a request takes: when its work must be done, and the signal that fires then. */
export interface Deadline {
  /** Epoch ms. */
  readonly at: number;
  readonly signal: AbortSignal;
  /** The page-load limit of this work when it is not the configured one (a job item's `timeout`). */
  readonly pageLoadMs?: number;
}

/** The page-load limit of work under `deadline`. */
export const pageLoadLimit = (deadline: Pick<Deadline, "pageLoadMs">, configured: number): number => deadline.pageLoadMs ?? configured;
