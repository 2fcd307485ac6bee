import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

// Percentiles of a scenario's samples (ms), rounded to `digits` decimals.
export type Sample = number[];
export const stats = (samples: Sample, digits = 0) => {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => Number(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(digits));
  return { p50_ms: at(0.5), p95_ms: at(0.95), n: sorted.length };
};

const RESULTS = path.join(path.dirname(fileURLToPath(import.meta.url)), "results.json");

/** Merges `figures` into bench/results.json (`npm run bench` and `npm run load` each own their keys); returns its path. */
export function writeResults(figures: Record<string, unknown>): string {
  const previous = existsSync(RESULTS) ? (JSON.parse(readFileSync(RESULTS, "utf8")) as Record<string, unknown>) : {};
  writeFileSync(RESULTS, `${JSON.stringify({ ...previous, ...figures }, null, 2)}\n`);
  return RESULTS;
}
