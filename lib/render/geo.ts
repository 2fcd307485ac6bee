import type { CaptureOptions } from "./options.js";

// `country` (docs/api.md, "Proxy"): the page's locale and time zone as a visitor in that country
// has them, from the runtime's own CLDR data (ICU): its most used language, and its main time zone.
// Nothing is looked up over the network.

/**
 * A country's main time zone where it has several (the most populous region's, as a visitor is
 * most likely there); elsewhere its only one. Names as ICU has them (which Chromium takes).
 */
const MAIN_ZONES: Record<string, string> = {
  AR: "America/Buenos_Aires",
  AU: "Australia/Sydney",
  BR: "America/Sao_Paulo",
  CA: "America/Toronto",
  CD: "Africa/Kinshasa",
  CL: "America/Santiago",
  CY: "Asia/Nicosia",
  EC: "America/Guayaquil",
  ES: "Europe/Madrid",
  FM: "Pacific/Ponape",
  GL: "America/Godthab",
  KI: "Pacific/Tarawa",
  KZ: "Asia/Almaty",
  MH: "Pacific/Majuro",
  MN: "Asia/Ulaanbaatar",
  MX: "America/Mexico_City",
  MY: "Asia/Kuala_Lumpur",
  PF: "Pacific/Tahiti",
  PG: "Pacific/Port_Moresby",
  PT: "Europe/Lisbon",
  RU: "Europe/Moscow",
  UA: "Europe/Kiev",
  US: "America/New_York",
  UZ: "Asia/Tashkent",
};

const regionNames = new Intl.DisplayNames(["en"], { type: "region", fallback: "none" });

/** The locale and time zone of a visitor in `country` (ISO 3166-1 alpha-2, upper case), or null for a code that names no country. */
export function countryDefaults(country: string): { locale: string; timezone: string } | null {
  if (!/^[A-Z]{2}$/.test(country) || country === "ZZ" || !regionNames.of(country)) return null;
  const likely = new Intl.Locale(`und-${country}`).maximize();
  const zones = (likely as Intl.Locale & { getTimeZones?: () => string[] | undefined }).getTimeZones?.() ?? [];
  if (likely.language === "und" || zones.length === 0) return null;
  return { locale: `${likely.language}-${country}`, timezone: MAIN_ZONES[country] ?? zones[0]! };
}

/** The page's locale: the request's, else its country's. */
export const localeOf = (options: Pick<CaptureOptions, "locale" | "country">): string | undefined =>
  options.locale ?? (options.country ? countryDefaults(options.country)?.locale : undefined);

/** The page's time zone: the request's, else its country's. */
export const timezoneOf = (options: Pick<CaptureOptions, "timezone" | "country">): string | undefined =>
  options.timezone ?? (options.country ? countryDefaults(options.country)?.timezone : undefined);
