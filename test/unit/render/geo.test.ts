import { describe, expect, it } from "vitest";
import { countryDefaults, localeOf, timezoneOf } from "../../../lib/render/geo.js";

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

  it("lets the request's own locale and time zone win", () => {
    expect(localeOf({ country: "FR" })).toBe("fr-FR");
    expect(localeOf({ country: "FR", locale: "en-GB" })).toBe("en-GB");
    expect(timezoneOf({ country: "FR", timezone: "Asia/Tokyo" })).toBe("Asia/Tokyo");
    expect(timezoneOf({})).toBeUndefined();
  });
});
