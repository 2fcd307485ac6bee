// Percentiles of a scenario's samples (ms), rounded to `digits` decimals.
export type Sample = number[];
export const stats = (samples: Sample, digits = 0) => {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => Number(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(digits));
  return { p50_ms: at(0.5), p95_ms: at(0.95), n: sorted.length };
};
