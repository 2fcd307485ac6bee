import { scheduleChecks } from "../lib/monitors/schedule.js";

// Scheduled every minute (lib/routes.ts, schedules): queues a check of every monitor due, each
// once (lib/monitors/schedule.ts). Two runs at once are safe.
export async function handler(): Promise<{ queued: number }> {
  return { queued: await scheduleChecks(Date.now()) };
}
