import { sweepChecks } from "../lib/monitors/outcomes.js";
import { scheduleChecks } from "../lib/monitors/schedule.js";

// Scheduled every minute (lib/routes.ts, schedules): ends the checks whose worker died on their last
// delivery (lib/monitors/check.ts, sweepChecks), then queues a check of every monitor due, each once
// (lib/monitors/schedule.ts). Two runs at once are safe.
export async function handler(): Promise<{ swept: number; queued: number }> {
  const now = Date.now();
  return { swept: await sweepChecks(now), queued: await scheduleChecks(now) };
}
