// What a page writes, read into the answer's types: language tags, dates, image sizes. Anything
// malformed reads as null, never as a guess.

// A language tag longer than this is not a real one (BCP 47 tags in use are under 20 characters).
const MAX_TAG_CHARS = 100;
/** An og:image width or height above this is not a real one. */
const MAX_IMAGE_SIDE = 100_000;

/** A language tag in its canonical form ("en_us" -> "en-US"); null when it is not a valid BCP 47 tag. */
export function languageTag(value: string | undefined): string | null {
  const tag = value?.split(",")[0]?.trim().replace(/_/g, "-");
  if (!tag || tag.length > MAX_TAG_CHARS) return null;
  try {
    return Intl.getCanonicalLocales(tag)[0] ?? null;
  } catch {
    return null;
  }
}

/**
 * An ISO 8601 date or date-time (as article tags and JSON-LD write them) in UTC, as
 * "2026-11-23T10:00:00.000Z"; a time without an offset is taken as UTC. Anything else: null.
 */
export function isoDate(value: string | null | undefined): string | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i.exec(value?.trim() ?? "");
  if (!match) return null;
  const [, year, month, day, hour = "00", minute = "00", second = "00", fraction = "0", zone = "Z"] = match;
  // Date() would roll an impossible day over (Feb 30 -> Mar 1): the calendar is checked first.
  const calendar = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  const valid = Number(year) >= 1000 && calendar.getUTCMonth() === Number(month) - 1 && calendar.getUTCDate() === Number(day);
  if (!valid || Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59) return null;
  const offset = zone.toUpperCase() === "Z" ? "Z" : `${zone.slice(0, 3)}:${zone.slice(3).replace(":", "") || "00"}`;
  const date = new Date(`${year}-${month}-${day}T${hour}:${minute}:${second}.${fraction.padEnd(3, "0").slice(0, 3)}${offset}`);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

/** An og:image width or height: a positive whole number of pixels, else null. */
export function pixels(value: string | undefined): number | null {
  const n = /^\d{1,6}$/.test(value?.trim() ?? "") ? Number(value) : 0;
  return n > 0 && n <= MAX_IMAGE_SIDE ? n : null;
}
