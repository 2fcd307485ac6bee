// What a monitor's requests take (docs/api.md, "Monitors"): a screenshot's viewport, part and page
// controls (lib/api/schemas.ts), and what a monitor adds: its interval, mode, threshold and what it
// ignores. Here, at the edge, because a monitor runs through lib/monitors, which sits above the
// shapes lib/api gives both the edge and the job runner.
import { z } from "zod";
import {
  boolean,
  COOKIE_PROSE,
  cookieRule,
  httpUrl,
  number,
  oneOf,
  PIXEL_CAP_PROSE,
  pageControlFields,
  RENDER_RULES_SCHEMA,
  renderFields,
  renderRules,
  SNAPSHOT_DEFAULTS,
  selectorList,
  webhookUrl,
} from "../api/schemas.js";
import { compilePattern, MAX_IGNORE_PATTERNS, MAX_PATTERN_CHARS } from "../monitors/observe.js";
import type { MonitorSpec } from "../monitors/store.js";

/** A monitor's interval: minutes, hours or a day, from 5 minutes to a day (docs/api.md, "Monitors"). */
const EVERY = /^([1-9]\d{0,4})([mhd])$/;
const EVERY_UNITS = { m: 60, h: 3_600, d: 86_400 } as const;
const everySeconds = (every: string) => {
  const [, count, unit] = EVERY.exec(every) ?? [];
  return count && unit ? Number(count) * EVERY_UNITS[unit as keyof typeof EVERY_UNITS] : Number.NaN;
};
const EVERY_RULE = 'must be an interval like "5m", "30m", "6h" or "1d", from 5 minutes to a day';

/** An `ignoreText` pattern: RE2 syntax (linear time: no backreferences or lookarounds), compiled once here. */
const ignorePattern = z
  .string({ error: "must be a regular expression (RE2 syntax)" })
  .min(1, { error: "must not be empty" })
  .max(MAX_PATTERN_CHARS, { error: `must be at most ${MAX_PATTERN_CHARS} characters` })
  .superRefine((pattern, ctx) => {
    try {
      compilePattern(pattern);
    } catch (error) {
      ctx.addIssue({ code: "custom", message: `is not a regular expression in RE2 syntax (no backreferences or lookarounds): ${(error as Error).message}` });
    }
  });

// A monitor's checks keep their own history: no logs of each page load; and no proxy (its credentials would be kept with it), so nothing for geo to follow.
const { capture: _capture, proxy: _proxy, geo: _geo, ...monitorPageControls } = pageControlFields;

// What a monitor captures: a screenshot's viewport and part, and every page control; its output is
// a PNG at 1x by default (a diff compares pixels: lossless, and four times fewer of them).
const monitorFields = z.strictObject({
  url: httpUrl,
  name: z.string({ error: "must be a string" }).trim().min(1, { error: "must not be empty" }).max(100, { error: "must be at most 100 characters" }).optional(),
  every: z
    .string({ error: EVERY_RULE })
    .refine((every) => everySeconds(every) >= 300 && everySeconds(every) <= 86_400, { error: EVERY_RULE })
    .meta({ pattern: EVERY.source, examples: ["5m", "1h", "1d"] })
    .default("1h"),
  mode: oneOf(["visual", "text", "both"]).default("both"),
  threshold: z
    .strictObject({ percent: number(0, 100) }, { error: "must be {percent}: the changed share of the compared area, 0 to 100" })
    .default({ percent: 0.1 }),
  ignoreSelectors: selectorList().default([]),
  ignoreText: z
    .array(ignorePattern, { error: "must be a list of regular expressions" })
    .max(MAX_IGNORE_PATTERNS, { error: `must hold at most ${MAX_IGNORE_PATTERNS} patterns` })
    .default([]),
  webhookUrl: webhookUrl.optional(),
  width: renderFields.width,
  height: renderFields.height,
  fullPage: renderFields.fullPage,
  deviceScaleFactor: number(1, 3).default(1),
  device: renderFields.device,
  darkMode: renderFields.darkMode,
  reducedMotion: renderFields.reducedMotion,
  selector: renderFields.selector,
  ...monitorPageControls,
});
type MonitorFields = z.output<typeof monitorFields>;

const monitorRules = (body: MonitorFields, ctx: z.RefinementCtx) => {
  renderRules({ ...body, format: "png", frame: "none", omitBackground: false }, ctx);
  cookieRule(body, ctx);
};

/** Body of POST /api/v1/monitors (docs/api.md, "Monitors"). */
export const monitorRequest = monitorFields
  .superRefine(monitorRules)
  .meta({ allOf: RENDER_RULES_SCHEMA.slice(1, 3), description: `${PIXEL_CAP_PROSE} ${COOKIE_PROSE}` });

// A change names what it changes: a field's default is for making a monitor, never for a field a PATCH leaves out
// (zod fills a default even under optional(), which emptied a monitor's cookies and headers on a PATCH of its name).
const changeOf = (schema: z.ZodType) => (schema instanceof z.ZodDefault ? (schema.unwrap() as z.ZodType) : schema).optional();

/** Body of PATCH /api/v1/monitors/{id}: `paused`, and any field of the monitor to change (null removes `name` or `webhookUrl`). */
export const monitorPatch = z
  .strictObject({
    paused: boolean().optional(),
    ...Object.fromEntries(Object.entries(monitorFields.shape).map(([field, schema]) => [field, changeOf(schema)])),
    name: monitorFields.shape.name.nullable(),
    webhookUrl: monitorFields.shape.webhookUrl.nullable(),
  })
  .refine((patch) => Object.keys(patch).length > 0, { error: "must change something: paused, or a field of the monitor" })
  .meta({ minProperties: 1 });

/** The query of GET /api/v1/monitors/{id}/checks: how many, and from before which check (the previous page's `next`). */
export const monitorChecksQuery = z.strictObject({
  limit: z.coerce.number({ error: "must be a whole number from 1 to 100" }).int({ error: "must be a whole number from 1 to 100" }).min(1).max(100).default(20),
  before: z
    .string()
    .regex(/^chk_[0-9a-z]{9}[A-Za-z0-9_-]{12}$/, { error: "must be a check id (the previous page's next)" })
    .optional(),
});

/** What a monitor runs, from its validated request. */
export function monitorSpecOf(body: MonitorFields): MonitorSpec {
  const { url: _u, name: _n, every, mode, threshold, ignoreSelectors, ignoreText, webhookUrl: _w, ...capture } = body;
  return {
    request: body,
    every: everySeconds(every),
    mode,
    thresholdPercent: threshold.percent,
    ignoreText,
    // The ignored elements are hidden where they stand: their room is kept, so nothing else moves.
    options: { ...SNAPSHOT_DEFAULTS, ...capture, format: "png", hideSelectors: [...capture.hideSelectors, ...ignoreSelectors] },
  };
}
