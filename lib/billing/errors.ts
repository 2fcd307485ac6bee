import { AppError } from "../errors.js";
import { formatUsd } from "./money.js";

/** 401: the key is unknown, malformed or missing where one is required. */
export const unauthorized = (message = "A valid API key is required: send Authorization: Bearer <key>.") => new AppError("UNAUTHORIZED", message);

/** 402: the balance does not cover the price. */
export const insufficientBalance = (priceMicroUsd: number, balanceMicroUsd: number) =>
  new AppError(
    "INSUFFICIENT_BALANCE",
    `This request costs ${formatUsd(priceMicroUsd)} and the balance is ${formatUsd(balanceMicroUsd)}. Top up at /dashboard.`,
  );

/** 402: a job's price is more than the balance (what other jobs hold is already out of it). */
export const jobHoldExceeds = (priceMicroUsd: number, balanceMicroUsd: number, heldMicroUsd: number) =>
  new AppError(
    "INSUFFICIENT_BALANCE",
    `This job's items cost ${formatUsd(priceMicroUsd)}, held when it is submitted, and the balance is ${formatUsd(balanceMicroUsd)}${
      heldMicroUsd > 0 ? ` (besides ${formatUsd(heldMicroUsd)} held by jobs still running)` : ""
    }. Top up at /dashboard, or submit fewer items.`,
  );

/** 429: too many requests in this window. */
export const rateLimited = (limit: number, windowSeconds: number, retryAfterSeconds: number) => {
  const per = windowSeconds === 1 ? "second" : windowSeconds === 3600 ? "hour" : `${windowSeconds} seconds`;
  return new AppError("RATE_LIMITED", `Too many requests: at most ${limit} per ${per}. Retry after ${retryAfterSeconds} s.`, {
    headers: { "Retry-After": String(retryAfterSeconds) },
  });
};

/** 429: a signed link's key has been charged its daily limit (`limit` micro-USD); it works again at `nextDay` (epoch ms, 00:00 UTC). */
export const dailyLimitReached = (limit: number, nextDay: number) => {
  const seconds = Math.max(1, Math.ceil((nextDay - Date.now()) / 1000));
  return new AppError("DAILY_LIMIT_REACHED", `This link's signing key has reached its daily limit of ${formatUsd(limit)}; its links work again at 00:00 UTC.`, {
    headers: { "Retry-After": String(seconds) },
  });
};
