// Money is integers of micro-USD (1 USD = 1,000,000 = USDC's atomic units); never floats.

/** Micro-USD in one cent. */
export const MICRO_PER_CENT = 10_000;
/** Micro-USD in one dollar. */
const MICRO_PER_USD = 1_000_000;

/** The signup bonus: 50 standard screenshots' worth (docs/api.md), $0.25. */
export const SIGNUP_BONUS_MICRO_USD = 250_000;

/** Whole cents, rounded down (docs/api.md's balance_cents and total_spent_cents). */
export const toCents = (microUsd: number): number => Math.floor(microUsd / MICRO_PER_CENT);

/** "$0.005", "$2.50": dollars with as many decimals as the amount needs (2 to 6). */
export function formatUsd(microUsd: number): string {
  const [dollars, fraction] = (Math.abs(microUsd) / MICRO_PER_USD).toFixed(6).split(".") as [string, string];
  return `${microUsd < 0 ? "-" : ""}$${dollars}.${fraction.replace(/0+$/, "").padEnd(2, "0")}`;
}

/** Parses "5", "5.25", "$20" (dollars, at most 6 decimals) into micro-USD; null when it is not an amount. */
export function parseUsd(text: string): number | null {
  const match = /^\$?(\d{1,9})(?:\.(\d{1,6}))?$/.exec(text.trim());
  if (!match) return null;
  return Number(match[1]) * MICRO_PER_USD + Number((match[2] ?? "").padEnd(6, "0"));
}
