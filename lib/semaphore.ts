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

/**
 * A counting semaphore shared fairly between tenants: at most `limit` holders, of which one tenant
 * holds at most `perTenant` (so that, with perTenant under limit, another tenant always finds a slot
 * or is next), and a freed slot goes to the waiting tenants in turn, not to whoever queued most.
 */
export function fairSemaphore(limit: number, perTenant: number) {
  let active = 0;
  const held = new Map<string, number>();
  // Waiters by tenant, tenants in the order they are served (a served tenant goes to the back).
  const waiting = new Map<string, Set<() => void>>();
  const startable = (tenant: string) => active < limit && (held.get(tenant) ?? 0) < perTenant;
  const start = (tenant: string) => {
    active++;
    held.set(tenant, (held.get(tenant) ?? 0) + 1);
  };
  const wakeNext = () => {
    for (const [tenant, queue] of waiting) {
      if (!startable(tenant)) continue;
      const next = queue.values().next().value!;
      queue.delete(next);
      waiting.delete(tenant);
      if (queue.size) waiting.set(tenant, queue);
      start(tenant);
      next();
      return;
    }
  };
  return async (tenant: string, signal: AbortSignal): Promise<() => void> => {
    signal.throwIfAborted();
    if (startable(tenant) && waiting.size === 0) start(tenant);
    else
      await new Promise<void>((resolve, reject) => {
        const queue = waiting.get(tenant) ?? new Set<() => void>();
        waiting.set(tenant, queue);
        const wake = () => {
          signal.removeEventListener("abort", leave);
          resolve();
        };
        const leave = () => {
          queue.delete(wake);
          if (queue.size === 0) waiting.delete(tenant);
          reject(signal.reason);
        };
        queue.add(wake);
        signal.addEventListener("abort", leave, { once: true });
        // Others may be waiting only for a tenant at its share: this one may start now.
        wakeNext();
      });
    let released = false;
    return () => {
      if (released) return;
      released = true;
      active--;
      const left = (held.get(tenant) ?? 1) - 1;
      if (left) held.set(tenant, left);
      else held.delete(tenant);
      wakeNext();
    };
  };
}
