import { parseProxy } from "./guard/upstream-proxy.js";
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

/**
 * The ISO 3166-1 alpha-2 codes `country` takes: those the runtime's CLDR data gives a language and a
 * time zone (codes withdrawn from ISO 3166-1, or only reserved there, which it still knows, left out). Written here, not
 * derived at load: deriving them cost every function ~56 ms at cold start (test/unit/render/geo.test.ts
 * holds the list to the runtime's data).
 */
export const COUNTRIES: readonly string[] = `AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS
BT BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH
ER ES ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HN HR HT HU
ID IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT
LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL
NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH
SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM
US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW`.split(/\s+/);
const KNOWN = new Set(COUNTRIES);

/** The locale and time zone of a visitor in `country` (ISO 3166-1 alpha-2, upper case), or null for a code that names no country. */
export function countryDefaults(country: string): { locale: string; timezone: string } | null {
  if (!KNOWN.has(country)) return null;
  const likely = new Intl.Locale(`und-${country}`).maximize();
  const zones = (likely as Intl.Locale & { getTimeZones?: () => string[] | undefined }).getTimeZones?.() ?? [];
  if (likely.language === "und" || zones.length === 0) return null;
  return { locale: `${likely.language}-${country}`, timezone: MAIN_ZONES[country] ?? zones[0]! };
}

/** What says where a page is seen from: the caller's `country`, `geo`, and the proxy it goes through. */
type SeenFrom = Pick<CaptureOptions, "geo" | "country" | "proxy">;

/** Where `geo: "auto"` found the country a page is seen from, said in the answer (docs/api.md, "Proxy and country"). */
export interface Geo {
  /** ISO 3166-1 alpha-2, or null where it cannot be known. */
  readonly country: string | null;
  /** The caller's `country`, the country the proxy's credentials name, or neither. */
  readonly source: "country" | "proxy-credentials" | "none";
}

/**
 * The exit country proxy providers are told in the credentials, as their documents publish it:
 * `-country-us` in the username (Bright Data, Decodo, SOAX, Geonode), `-cc-DE` (Oxylabs),
 * `_country-us` in the password (IPRoyal, Evomi), `__cr.de` (DataImpulse). A list of countries
 * (`_country-us,ca`) or a region (`-country-eu`) names none.
 */
const CREDENTIAL_COUNTRY = /(?:^|[-_])(?:country|cc)-([a-z]{2})(?![a-z0-9,])|__cr\.([a-z]{2})(?![a-z0-9,])/gi;

/** The one country a proxy URL's credentials name, or null (none, several, or not a country). */
export function proxyCountry(proxy: string): string | null {
  const parsed = parseProxy(proxy);
  if (typeof parsed === "string") return null;
  const named = new Set([parsed.username, parsed.password].flatMap((part) => [...part.matchAll(CREDENTIAL_COUNTRY)].map((m) => (m[1] ?? m[2])!.toUpperCase())));
  const [country] = named;
  return named.size === 1 && KNOWN.has(country!) ? country! : null;
}

/** Where `geo: "auto"` finds the page's country: the caller's `country`, else the proxy's credentials; null when it was not asked. */
export function geoOf(options: SeenFrom): Geo | null {
  if (options.geo !== "auto") return null;
  if (options.country) return { country: options.country, source: "country" };
  const named = options.proxy ? proxyCountry(options.proxy) : null;
  return named ? { country: named, source: "proxy-credentials" } : { country: null, source: "none" };
}

/** `{ geo }` for an answer, when `geo: "auto"` was asked; else nothing. */
export function geoField(options: SeenFrom): { geo?: Geo } {
  const geo = geoOf(options);
  return geo ? { geo } : {};
}

/** The country whose locale and time zone the page gets: the request's, else the one `geo: "auto"` found. */
const countryOf = (options: SeenFrom): string | undefined => options.country ?? geoOf(options)?.country ?? undefined;

type GeoOptions = SeenFrom & Pick<CaptureOptions, "locale" | "timezone">;

/** The page's locale: the request's, else its country's. */
export const localeOf = (options: GeoOptions): string | undefined => options.locale ?? countryDefaults(countryOf(options) ?? "")?.locale;

/** The page's time zone: the request's, else its country's. */
export const timezoneOf = (options: GeoOptions): string | undefined => options.timezone ?? countryDefaults(countryOf(options) ?? "")?.timezone;
