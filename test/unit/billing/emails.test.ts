import { describe, expect, it } from "vitest";
import { canonicalEmail, isDisposable } from "../../../lib/billing/emails.js";

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
