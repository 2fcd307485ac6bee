import { redactedLeft, restoredControls, withoutPageSecrets } from "../lib/api/secrets.js";
import { AppError, invalidParams } from "../lib/errors.js";
import { canonical } from "../lib/http/idempotency.js";
import { keyAccess } from "../lib/http/key-access.js";
import { monitorPatch, monitorRequest, monitorSpecOf } from "../lib/http/monitor-schemas.js";
import { monitorAnswer } from "../lib/http/monitors.js";
import { assertReachable, assertWebhook } from "../lib/http/outbound.js";
import { json } from "../lib/http/responses.js";
import { validate } from "../lib/http/validate.js";
import { withHttp } from "../lib/http/with-http.js";
import { deleteObjects } from "../lib/monitors/objects.js";
import { changeMonitor, getMonitor, keptSpec, type Monitor, openMonitor, ownMonitor } from "../lib/monitors/store.js";
import { hasCredentials, REDACTED } from "../lib/redacted.js";

/** Times a change is tried again when a check or the schedule changed the monitor meanwhile. */
const ATTEMPTS = 5;

/** Whether `after` watches something else than `before` (its page, what it compares, how it renders): the baseline no longer applies. */
const watchesOtherwise = (before: Monitor, after: ReturnType<typeof monitorSpecOf>) => {
  // As stored: the table keeps no undefined field, and no order of a map's keys.
  const watched = (spec: Pick<Monitor, "request" | "mode" | "ignoreText" | "options">) =>
    canonical(JSON.parse(JSON.stringify([spec.request.url, spec.mode, spec.ignoreText, spec.options])));
  return watched(before) !== watched(after);
};

// PATCH /api/v1/monitors/{monitorId}: {"paused": true} pauses it (nothing runs), false resumes it
// (a check is due at once, its failures forgotten); any other field of the monitor changes it, the
// whole validated again as POST validates it (null removes `name` or `webhookUrl`; a secret sent
// back as "[redacted]" keeps its stored value). A change of what
// it watches (its page, mode, capture options, ignored parts) starts a new baseline at its next
// check; a new `every` counts from now. Answers the monitor as it now is.
export const handler = withHttp({ route: "monitors-update", schema: monitorPatch, access: keyAccess }, async ({ account, params, body }) => {
  const { paused, ...fields } = body;
  let monitor = await ownMonitor(account.accountId, params.monitorId ?? "");
  const given = await openMonitor(monitor);
  // The page's secrets were given for its origin: a page moved to another gets none of them unless
  // they are sent again (else any key of the account could send them anywhere and read them there).
  const url = (fields as { url?: unknown }).url;
  const moved = typeof url === "string" && URL.canParse(url) && new URL(url).origin !== new URL(given.request.url).origin;
  const kept = moved ? withoutPageSecrets(given.request) : given.request;
  const request: Record<string, unknown> = { ...kept };
  // A secret sent back as the answer showed it ("[redacted]") keeps the value it stands for.
  for (const [field, value] of Object.entries(restoredControls(fields, kept))) {
    if (value === null) delete request[field];
    else if (value !== undefined) request[field] = value;
  }
  const unrestored = redactedLeft(request);
  if (unrestored)
    throw invalidParams(
      `Invalid request: ${unrestored}: "${REDACTED}" stands for a stored secret, and there is none to keep${moved ? " (the page moved to another origin: send its secrets again)" : ""}.`,
    );
  // A webhook URL with credentials, from before they were refused, is kept as it is while the change leaves it alone.
  const earlierHook = !("webhookUrl" in fields) && typeof request.webhookUrl === "string" && hasCredentials(request.webhookUrl) ? request.webhookUrl : null;
  const validated = monitorSpecOf(validate(monitorRequest, earlierHook ? { ...request, webhookUrl: undefined } : request));
  const spec = earlierHook ? { ...validated, request: { ...validated.request, webhookUrl: earlierHook } } : validated;
  if (spec.request.url !== given.request.url) await assertReachable("url", spec.request.url);
  if (spec.request.webhookUrl && spec.request.webhookUrl !== given.request.webhookUrl) await assertWebhook(account.accountId, spec.request.webhookUrl);
  // Its secrets sealed again, under a new key (none kept when it holds none).
  const keptNow = await keptSpec(spec, monitor.id);
  for (let attempt = 1; ; attempt++) {
    const now = Date.now();
    const rebase = watchesOtherwise(await openMonitor(monitor), spec);
    const pausing = paused ?? monitor.paused;
    const resumed = monitor.paused && paused === false;
    const nextDueAt = pausing
      ? undefined
      : resumed
        ? now
        : spec.every !== monitor.every || monitor.nextDueAt === undefined
          ? now + spec.every * 1000
          : monitor.nextDueAt;
    const changed = await changeMonitor(
      monitor,
      {
        ...keptNow,
        paused: pausing,
        nextDueAt,
        ...(paused === true && !monitor.paused ? { pausedReason: "requested" } : {}),
        ...(resumed ? { failures: 0, failedNotified: false } : {}),
        ...(rebase ? { generation: monitor.generation + 1 } : {}),
      },
      [...(resumed ? ["pausedReason"] : []), ...(rebase ? ["baseline"] : []), ...(keptNow.sealed ? [] : ["sealed", "secretKey"])],
    );
    if (changed) {
      if (rebase) await deleteObjects([monitor.baseline?.imageKey, monitor.baseline?.textKey]);
      break;
    }
    const again = await getMonitor(account.accountId, monitor.id);
    if (!again) throw new AppError("NOT_FOUND", "No such monitor.");
    if (attempt >= ATTEMPTS) throw new AppError("INTERNAL_ERROR", "The monitor kept changing while it was being updated; try again.");
    monitor = again;
  }
  return json(await monitorAnswer((await getMonitor(account.accountId, monitor.id)) ?? monitor, true));
});
