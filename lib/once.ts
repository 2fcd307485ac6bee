// Work done once per process and shared by every caller, unless it fails: then the next call tries again.

/** A function that runs `make` on its first call and answers every later call with the same promise, until it rejects. */
export function onceUntilFailure<T>(make: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | null = null;
  return () => {
    if (pending) return pending;
    const attempt = make();
    pending = attempt;
    attempt.catch(() => {
      if (pending === attempt) pending = null;
    });
    return attempt;
  };
}
