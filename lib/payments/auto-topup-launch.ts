import { config } from "../config.js";
import { describeError, log } from "../log.js";
import { remember } from "../lru.js";

// A charge that leaves a balance below its auto-topup threshold launches a pull beside the request,
// never inside it: on Lambda, an asynchronous invocation of the auto-topup function (lib/routes.ts,
// workers), which the charging function hands off in the time its own work takes (the invocation is
// queued by Lambda, and a frozen function could not finish a pull it began itself); under npm run
// dev and self-hosting, the same handler in this process, not awaited. Either way the pull re-reads
// the balance and claims the pull itself (one per account at a time), so a launch too many costs a
// read; the reconciler (every minute) starts any that a launch missed.

/** An account's pull is launched at most this often per process (a pull takes a block or two). */
const RELAUNCH_MS = 30_000;
const launched = new Map<string, number>();

/** Launches `accountId`'s pull; resolves once it is handed off (never rejects: a failed launch is the reconciler's). */
export async function launchAutoTopup(accountId: string): Promise<void> {
  const last = launched.get(accountId);
  if (last !== undefined && Date.now() - last < RELAUNCH_MS) return;
  remember(launched, accountId, Date.now(), 10_000);
  try {
    if (config.AWS_LAMBDA_FUNCTION_NAME && config.AUTO_TOPUP_FUNCTION) {
      const { invokeAsync } = await import("./invoke.js");
      await invokeAsync(config.AUTO_TOPUP_FUNCTION, { accountId });
      return;
    }
    const { pullIfLow } = await import("./auto-topup.js");
    void pullIfLow(accountId).catch((error: unknown) => log.error("an auto-topup pull failed", { accountId, error: describeError(error) }));
  } catch (error) {
    log.error("launching an auto-topup pull failed; the reconciler will start it", { accountId, error: describeError(error) });
  }
}
