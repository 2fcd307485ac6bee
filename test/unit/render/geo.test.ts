import { describe, expect, it } from "vitest";
import { COUNTRIES, countryDefaults, geoOf, localeOf, proxyCountry, timezoneOf } from "../../../lib/render/geo.js";

/** The codes the runtime's CLDR data names as regions and gives a language and a time zone. */
function runtimeCountries(): string[] {
  const names = new Intl.DisplayNames(["en"], { type: "region", fallback: "none" });
  const letters = Array.from({ length: 26 }, (_, i) => String.fromCharCode(65 + i));
  return letters.flatMap((a) =>
    letters
      .map((b) => a + b)
      .filter((code) => {
        if (code === "ZZ" || !names.of(code)) return false;
        const likely = new Intl.Locale(`und-${code}`).maximize() as Intl.Locale & { getTimeZones(): string[] | undefined };
        return likely.language !== "und" && (likely.getTimeZones() ?? []).length > 0;
      }),
  );
}

describe("country: a visitor's locale and time zone", () => {
  it("gives the country's most used language and its main time zone, from the runtime's CLDR data", () => {
    expect(countryDefaults("DE")).toEqual({ locale: "de-DE", timezone: "Europe/Berlin" });
    expect(countryDefaults("JP")).toEqual({ locale: "ja-JP", timezone: "Asia/Tokyo" });
    // Where a country has many zones, the most populous region's, not the first by name (America/Adak).
    expect(countryDefaults("US")).toEqual({ locale: "en-US", timezone: "America/New_York" });
    expect(countryDefaults("BR")).toEqual({ locale: "pt-BR", timezone: "America/Sao_Paulo" });
    expect(countryDefaults("RU")?.timezone).toBe("Europe/Moscow");
    expect(countryDefaults("IN")).toEqual({ locale: "hi-IN", timezone: "Asia/Calcutta" });
  });

  it("names no country for anything else", () => {
    for (const code of ["de", "USA", "ZZ", "XX", "", "D1"]) expect(countryDefaults(code), code).toBeNull();
  });

  it("takes every country the runtime's data knows but codes withdrawn from (or only reserved in) ISO 3166-1", () => {
    const known = runtimeCountries();
    expect(COUNTRIES.filter((code) => !known.includes(code))).toEqual([]);
    expect(known.filter((code) => !COUNTRIES.includes(code))).toEqual([
      "AN",
      "BU",
      "CS",
      "DD",
      "DY",
      "FX",
      "HV",
      "NH",
      "RH",
      "SU",
      "TP",
      "UK",
      "VD",
      "YD",
      "YU",
      "ZR",
    ]);
  });

  it("lets the request's own locale and time zone win", () => {
    expect(localeOf({ country: "FR" })).toBe("fr-FR");
    expect(localeOf({ country: "FR", locale: "en-GB" })).toBe("en-GB");
    expect(timezoneOf({ country: "FR", timezone: "Asia/Tokyo" })).toBe("Asia/Tokyo");
    expect(timezoneOf({})).toBeUndefined();
  });
});

describe('geo "auto": the country a proxy\'s credentials name', () => {
  it("reads each provider's published convention, in the user or the password", () => {
    for (const [proxy, country] of [
      ["http://brd-customer-c123-zone-residential-country-us:secret@proxy.example:22225", "US"], // Bright Data
      ["http://brd-customer-c123-zone-isp-country-fr-city-paris:secret@proxy.example:22225", "FR"],
      ["http://customer-ada-cc-DE:secret@proxy.example:7777", "DE"], // Oxylabs
      ["http://user-ada-country-jp:secret@proxy.example:10000", "JP"], // Decodo
      ["http://ada-country-US-zip-10001:secret@proxy.example:9000", "US"], // Geonode
      ["http://ada:secret_country-br@proxy.example:12321", "BR"], // IPRoyal
      ["http://ada:secret_country-GB_session-x1@proxy.example:1000", "GB"], // Evomi
      ["http://login__cr.nl:secret@proxy.example:823", "NL"], // DataImpulse
      ["socks5://ada-country-it:secret@proxy.example:1080", "IT"],
      ["http://ada%2Dcountry%2Dpl:secret@proxy.example:3128", "PL"], // percent-encoded as sent
    ] as const) {
      expect(proxyCountry(proxy), proxy).toBe(country);
    }
  });

  it("names none where the credentials say no one country", () => {
    for (const proxy of [
      "http://ada:secret@proxy.example:3128", // no targeting
      "http://proxy.example:3128", // no credentials
      "http://brd-customer-c1-zone-z-country-eu:secret@proxy.example:22225", // a region, not a country
      "http://ada:secret_country-us,ca@proxy.example:12321", // a list: the exit is one of them
      "http://login__cr.de,fr:secret@proxy.example:823",
      "http://login__nocr.de:secret@proxy.example:823", // DataImpulse's exclusion
      "http://ada-country-de:secret_country-fr@proxy.example:3128", // two say different things
      "http://ada-country-zz:secret@proxy.example:3128", // no such country
      "http://ada-country-usa:secret@proxy.example:3128",
      "http://adaxcountry-de:secret@proxy.example:3128", // not a word of its own
      "not a url",
    ]) {
      expect(proxyCountry(proxy), proxy).toBeNull();
    }
    expect(proxyCountry("http://ada-country-de:secret_country-de@proxy.example:3128")).toBe("DE"); // said twice, alike
  });

  it("is asked for: the caller's country first, then the proxy's credentials, else none; and then the locale and time zone follow", () => {
    const proxy = "http://ada-country-de:secret@proxy.example:3128";
    expect(geoOf({ proxy })).toBeNull();
    expect(geoOf({ geo: "auto", proxy })).toEqual({ country: "DE", source: "proxy-credentials" });
    expect(geoOf({ geo: "auto", proxy, country: "JP" })).toEqual({ country: "JP", source: "country" });
    expect(geoOf({ geo: "auto", proxy: "http://ada:secret@proxy.example:3128" })).toEqual({ country: null, source: "none" });
    expect(localeOf({ geo: "auto", proxy })).toBe("de-DE");
    expect(timezoneOf({ geo: "auto", proxy })).toBe("Europe/Berlin");
    expect(localeOf({ proxy })).toBeUndefined(); // without geo, credentials are not read
    expect(localeOf({ geo: "auto", proxy, locale: "en-GB" })).toBe("en-GB");
  });
});
