import { describe, expect, it } from "vitest";
import { COUNTRIES, countryDefaults, localeOf, timezoneOf } from "../../../lib/render/geo.js";

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
