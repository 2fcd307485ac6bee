import { AsyncLocalStorage } from "node:async_hooks";

// Whose work this is: an account, an x402 payer, or a client address, set where a request or a
// queued message enters (lib/http/with-http.ts, functions/job-worker.ts) and read by the pools a
// process shares between them (lib/render/browser.ts's pages): one process renders for everyone
// under `npm run dev`, so its pool is shared per tenant, never held whole by one.
const current = new AsyncLocalStorage<string>();

/** Runs `work` as `tenant`'s. */
export const asTenant = <T>(tenant: string, work: () => T): T => current.run(tenant, work);

/** The tenant whose work this is; "" for the process's own (a warm-up, a probe). */
export const tenantNow = (): string => current.getStore() ?? "";
