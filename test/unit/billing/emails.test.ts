import { describe, expect, it } from "vitest";
import { canonicalEmail, imitatesLatinDomain, isDisposable, isRelay } from "../../../lib/billing/emails.js";

describe("canonicalEmail", () => {
  it.each([
    ["Victim@Gmail.com", "victim@gmail.com"],
    ["  victim@gmail.com ", "victim@gmail.com"],
    ["victim+1@gmail.com", "victim@gmail.com"],
    ["v.ic.tim@gmail.com", "victim@gmail.com"],
    ["v.ictim+x@googlemail.com", "victim@gmail.com"],
    ["victim@gmail.com.", "victim@gmail.com"],
    ["\uFF56ictim@gmail.com", "victim@gmail.com"],
    ["first.last+news@example.com", "first.last@example.com"],
    ["ann@BÜCHER.example", "ann@xn--bcher-kva.example"],
    ["ann@xn--bcher-kva.example", "ann@xn--bcher-kva.example"],
    ["victim@gm\u0430il.com", "victim@gmail.com"],
    ["victim@xn--gmil-63d.com", "victim@gmail.com"],
    ["victim@\u0440aypal.com", "victim@paypal.com"],
    ["+only@example.com", "+only@example.com"],
    // Providers' rules, from validator.js: Yahoo's disposable "-keyword", Yandex's domains as one, Outlook's and iCloud's "+tag".
    ["victim-shop@yahoo.com", "victim@yahoo.com"],
    ["victim-a-b@ymail.com", "victim-a@ymail.com"],
    ["-x@yahoo.com", "-x@yahoo.com"],
    ["Victim@ya.ru", "victim@yandex.ru"],
    ["victim@yandex.com", "victim@yandex.ru"],
    ["victim+news@hotmail.co.uk", "victim@hotmail.co.uk"],
    ["victim+news@icloud.com", "victim@icloud.com"],
    // Elsewhere a hyphen is part of the name, and dots count.
    ["first-last@example.com", "first-last@example.com"],
    ["v.ictim@outlook.com", "v.ictim@outlook.com"],
  ])("%s is %s", (email, canonical) => {
    expect(canonicalEmail(email)).toBe(canonical);
  });
});

describe("isDisposable", () => {
  it("knows the list's domains and their subdomains, and nothing else", () => {
    expect(isDisposable("x@mailinator.com")).toBe(true);
    expect(isDisposable("x@inbox.mailinator.com")).toBe(true);
    expect(isDisposable("x@yopmail.com")).toBe(true);
    expect(isDisposable("x@gmail.com")).toBe(false);
    expect(isDisposable("x@outlook.com")).toBe(false);
    expect(isDisposable("x@mail.example.com")).toBe(false);
    expect(isDisposable("x@com")).toBe(false);
  });
});

describe("imitatesLatinDomain", () => {
  it.each([
    ["victim@gm\u0430il.com", true],
    ["victim@xn--gmil-63d.com", true],
    ["victim@\u0440\u0430\u0443.com", true],
    ["victim@\u0440aypal.com", true],
    ["victim@mail.\u03bf\u03c1.com", true],
    ["victim@gmail.com", false],
    ["ann@b\u00fccher.example", false],
    ["ivan@\u043f\u043e\u0447\u0442\u0430.\u0440\u0444", false],
    ["nikos@\u03b5\u03bb\u03bb\u03ac\u03b4\u03b1.gr", false],
  ])("%s: %s", (email, imitates) => {
    expect(imitatesLatinDomain(email)).toBe(imitates);
  });
});

describe("isRelay", () => {
  it("knows the privacy relays' domains and their subdomains, and nothing else", () => {
    for (const address of [
      "x@duck.com",
      "x@mozmail.com",
      "abc@simplelogin.com",
      "x@slmail.me",
      "x@privaterelay.appleid.com",
      "x@me.anonaddy.com",
      "x@you.33mail.com",
    ])
      expect(isRelay(address), address).toBe(true);
    for (const address of ["x@gmail.com", "x@duckduckgo.com", "x@proton.me", "x@example.com"]) expect(isRelay(address), address).toBe(false);
  });
});
