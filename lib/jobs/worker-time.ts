import { consumers } from "../routes.js";

// The time a jobs worker gives one piece of work (a job's item: lib/jobs/run.ts; a monitor's check:
// lib/monitors/check.ts; attempted alike: lib/jobs/attempt.ts), and how long its lease and charge
// outlast it. A piece whose worker died on its last delivery is swept a minute or so after its lease.

/** Time work is given beyond its page-load limit: capture, encoding, storing. */
export const WORK_RESERVE_MS = 20_000;
/** A worker holds its work this long past its own deadline before another may take it over. */
export const LEASE_MARGIN_MS = 15_000;
/** The reconciler leaves the work's charge alone this long (longer than the queue redelivers: docs/design.md, "Jobs"). */
export const CHARGE_HOLD_MS = 60 * 60_000;
/** The worker's own time limit (lib/routes.ts, consumers) and what work leaves of it: ending it, its events, feeding the next. */
export const WORKER_LIMIT_MS = consumers.find((c) => c.id === "job-worker")!.timeoutSeconds * 1000;
export const WORKER_MARGIN_MS = 5_000;
