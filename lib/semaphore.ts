/** A small counting semaphore: work beyond `limit` waits for a slot instead of thrashing the CPU; a waiter whose signal aborts leaves the queue. */
export function semaphore(limit: number) {
  let active = 0;
  const waiting = new Set<() => void>();
  const release = () => {
    active--;
    const next = waiting.values().next().value;
    if (next) {
      waiting.delete(next);
      next();
    }
  };
  return async (signal: AbortSignal): Promise<() => void> => {
    signal.throwIfAborted();
    if (active >= limit) {
      await new Promise<void>((resolve, reject) => {
        const wake = () => {
          signal.removeEventListener("abort", leave);
          resolve();
        };
        const leave = () => {
          waiting.delete(wake);
          reject(signal.reason);
        };
        waiting.add(wake);
        signal.addEventListener("abort", leave, { once: true });
      });
    }
    active++;
    return release;
  };
}
