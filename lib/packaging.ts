import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

// Packaging facts: where the deployed stack puts things, written once. stacks/ builds and deploys
// from them and hands the runtime their locations through environment variables (lib/config.ts);
// dev/ creates the local table from the same definition. This module imports nothing of the
// project, so the stacks never load runtime configuration.

/** Lambda's folder of the function's code: files copied next to a handler land under it. */
const FUNCTION_ROOT = "/var/task";

/** Where each layer is mounted in a function (/opt/<folder>). */
export const LAYER_MOUNTS = { chromium: "/opt/chromium", fonts: "/opt/fonts", filterLists: "/opt/filter-lists" } as const;

/** The Chromium layer's boot module (lib/render/packaging/chromium-boot.ts, built into it), preloaded by the rendering functions. */
export const CHROMIUM_BOOT_FILE = "boot.mjs";

/** Files copied next to a function's handler: `from` the repository, `to` under the function's root. */
export const COPIED_FILES = {
  // DuckDuckGo's autoconsent content script and its compact rules (the browser's cookie-banner step).
  autoconsent: [
    { from: "node_modules/@duckduckgo/autoconsent/dist/autoconsent.playwright.js", to: "autoconsent/autoconsent.playwright.js" },
    { from: "node_modules/@duckduckgo/autoconsent/rules/compact-rules.json", to: "autoconsent/compact-rules.json" },
  ],
  // sharp (libvips: stitching tiles of very tall captures) with its linux-x64 binaries and its
  // dependencies, as node_modules next to the handler: it is native, so the bundle leaves it external.
  sharp: ["sharp", "@img/sharp-linux-x64", "@img/sharp-libvips-linux-x64", "@img/colour", "detect-libc", "semver"].map((pkg) => ({
    from: `node_modules/${pkg}`,
    to: `node_modules/${pkg}`,
  })),
  // The dashboard's sources, assembled into one page by lib/http/dashboard-page.ts.
  dashboard: ["index.html", "dashboard.css", "dashboard.js"].map((file) => ({ from: `dashboard/${file}`, to: `dashboard/${file}` })),
} as const;

/** The folder a group of copied files lands in on Lambda (e.g. /var/task/autoconsent). */
export const copiedDir = (group: keyof typeof COPIED_FILES): string => `${FUNCTION_ROOT}/${COPIED_FILES[group][0]!.to.split("/")[0]}`;

/**
 * The one DynamoDB table (single-table design, docs/design.md): string keys pk/sk and a TTL
 * attribute in epoch seconds (DynamoDB deletes expired items lazily: rate-limit windows and the like).
 */
export const TABLE = {
  fields: { pk: "string", sk: "string" },
  primaryIndex: { partitionKey: "pk", sortKey: "sk" },
  timeToLiveAttribute: "expiresAt",
} as const;

let root: string | undefined;

/**
 * The repository's root folder: the nearest folder above this module whose package.json is the
 * project's. For deploy and local tooling only, never in a Lambda. A path relative to a module's
 * `import.meta.url` is not enough: `sst deploy` runs the stacks as one bundle written into the
 * root (`.sst.config.<n>.mjs`), tsx runs them from their own folders.
 */
export function projectRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  const ours = (manifest: string) => existsSync(manifest) && (JSON.parse(readFileSync(manifest, "utf8")) as { name?: string }).name === "shotline";
  while (!root) {
    if (ours(path.join(dir, "package.json"))) root = dir;
    else if (path.dirname(dir) === dir) throw new Error(`no Shotline package.json above ${fileURLToPath(import.meta.url)}`);
    else dir = path.dirname(dir);
  }
  return root;
}

/** package.json's version, read at deploy (stacks/Api.ts) or local start (dev/dev.ts), never in a Lambda. */
export const packageVersion = (): string => (JSON.parse(readFileSync(path.join(projectRoot(), "package.json"), "utf8")) as { version: string }).version;

/** Days the bucket keeps a stored output (`outputs/`) and a kept answer's body (`answers/`) before its lifecycle rule deletes them. */
export const OUTPUT_RETENTION_DAYS = 1;

/** Days a job, its items' requests, results and outputs are kept (`jobs/` in the bucket, the job's items in the table). */
export const JOB_RETENTION_DAYS = 7;

/** Deliveries of a job item's (or check's) message before it goes to the dead-letter queue (its redrive policy); the last fails the item rather than the message, and a worker that dies on it leaves the item to the sweeper (lib/jobs/attempt.ts). */
export const JOB_MAX_RECEIVES = 3;

/** Where a job's requests, results and outputs are in the bucket: `jobs/<job id>/...`. */
export const JOBS_PREFIX = "jobs/";

/** Days a monitor's checks, their images and its webhook events are kept (from each check: `monitor-checks/` in the bucket). */
export const MONITOR_HISTORY_DAYS = 30;

/** A monitor's checks' images (before, after, diff, thumbnail), kept MONITOR_HISTORY_DAYS: `monitor-checks/<monitor id>/...`. */
export const MONITOR_CHECKS_PREFIX = "monitor-checks/";

/** A monitor's baseline (its capture and text at the last change): kept as long as the monitor, `monitor-baselines/<monitor id>/...`. */
export const MONITOR_BASELINES_PREFIX = "monitor-baselines/";

/**
 * The render cache's objects (lib/storage/outputs.ts): under `cache/d<N>/`, deleted by a lifecycle rule
 * N + 1 days after they were written (stacks/Storage.ts), N the smallest class that covers the
 * entry's TTL. Everything else in the bucket (large outputs, kept answers) expires after a day.
 */
export const CACHE_PREFIX = "cache/";
export const CACHE_RETENTION_DAYS = [1, 7, 30] as const;

/**
 * Stages for development, whose data may go with the stack: `dev`, `test`, `local`, and names
 * starting `dev-`, `pr-` or `preview-`. Every other stage (production, prod, staging, a personal
 * stage named after its user) keeps its table and bucket when removed, guards the table against
 * deletion, and keeps logs longer (docs/deploy.md).
 */
export const isDevelopmentStage = (stage: string): boolean => /^(dev|test|local)$|^(dev|pr|preview)-/.test(stage);

/** The CloudWatch metrics a reconciler pass reports (lib/payments/reconcile.ts), which stacks/Monitoring.ts alarms on. */
export const RECONCILER_METRICS = { namespace: "Shotline", refunded: "ReconcilerRefunds", pending: "UnconfirmedSettlements" } as const;

/**
 * The headers our CloudFront adds to what it sends the API (stacks/Cdn.ts): the edge secret, and
 * the viewer's address as CloudFront saw it (lib/http/client-address.ts believes it only with the secret).
 */
export const EDGE_HEADERS = { secret: "x-shotline-edge", viewer: "x-shotline-viewer-address" } as const;
