import { describe, expect, it } from "vitest";
import { formatUsd, parseUsd, toCents } from "../../../lib/billing/money.js";
import { PRICES } from "../../../lib/routes.js";

describe("money", () => {
  it("rounds cents down and keeps micro-USD exact", () => {
    expect(toCents(250_000)).toBe(25);
    expect(toCents(9_999)).toBe(0);
    expect(toCents(10_000)).toBe(1);
    expect(toCents(245_000)).toBe(24);
    expect(toCents(0)).toBe(0);
  });

  it("formats dollars with the decimals the amount needs", () => {
    expect(formatUsd(PRICES.screenshot)).toBe("$0.005");
    expect(formatUsd(PRICES.mockup)).toBe("$0.01");
    expect(formatUsd(0)).toBe("$0.00");
    expect(formatUsd(5_000_000)).toBe("$5.00");
    expect(formatUsd(1_234_567)).toBe("$1.234567");
  });

  it("parses dollar amounts exactly, refusing anything else", () => {
    expect(parseUsd("5")).toBe(5_000_000);
    expect(parseUsd("$20.50")).toBe(20_500_000);
    expect(parseUsd("0.000001")).toBe(1);
    expect(parseUsd("0.1")).toBe(100_000);
    for (const bad of ["", "abc", "-5", "1.0000001", "1e3", "5.", ".5"]) expect(parseUsd(bad), bad).toBeNull();
  });
});
