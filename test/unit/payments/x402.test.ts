import { declarePaymentIdentifierExtension } from "@x402/extensions/payment-identifier";
import { describe, expect, it } from "vitest";
import { PAYMENT_IDENTIFIER_EXTENSION, requirementsV1, requirementsV2 } from "../../../lib/payments/requirements.js";
import { paymentIdentifierOf, readPayment } from "../../../lib/payments/x402.js";

const b64 = (value: unknown) => Buffer.from(typeof value === "string" ? value : JSON.stringify(value)).toString("base64");
const authorization = {
  from: `0x${"a".repeat(40)}`,
  to: `0x${"b".repeat(40)}`,
  value: "5000",
  validAfter: "0",
  validBefore: "1900000000",
  nonce: `0x${"c".repeat(64)}`,
};
const payload = { x402Version: 2, accepted: {}, payload: { signature: "0xabc", authorization } };
const v1 = { ...payload, x402Version: 1 };
const expected = {
  from: authorization.from,
  to: authorization.to,
  value: authorization.value,
  nonce: authorization.nonce,
  validBefore: authorization.validBefore,
};

describe("readPayment", () => {
  it("reads a v2 PAYMENT-SIGNATURE and a v1 X-PAYMENT header with their authorisation, and nothing when neither is sent", () => {
    expect(readPayment({ "payment-signature": b64(payload) })).toEqual({ version: 2, payload, authorization: expected });
    expect(readPayment({ "x-payment": b64(v1) })).toEqual({ version: 1, payload: v1, authorization: expected });
    expect(readPayment({ authorization: "Bearer x" })).toBeNull();
  });

  it("prefers the v2 header when both are sent", () => {
    expect(readPayment({ "payment-signature": b64(payload), "x-payment": b64(v1) })).toMatchObject({ version: 2 });
  });

  const withAuthorization = (change: Record<string, unknown>) =>
    b64({ ...payload, payload: { signature: "0xabc", authorization: { ...authorization, ...change } } });
  it.each([
    ["not base64 JSON", "%%%not-base64", /not base64-encoded x402 JSON/],
    ["base64 of text that is not JSON", b64("hello"), /not base64-encoded x402 JSON/],
    ["JSON that is not an object", b64("42"), /not base64-encoded x402 JSON/],
    ["JSON null", b64("null"), /not base64-encoded x402 JSON/],
    ["an empty header", "", /not base64-encoded x402 JSON/],
    ["an object without a payload", b64({ x402Version: 2 }), /not an exact EVM authorization/],
    ['{"payload":{}}', b64({ x402Version: 2, payload: {} }), /not an exact EVM authorization/],
    ["a v1 payload in the v2 header", b64(v1), /x402Version 1; PAYMENT-SIGNATURE carries version 2/],
    ["no version", b64({ payload: payload.payload }), /x402Version undefined/],
    ["a signature that is not hex", b64({ ...payload, payload: { signature: "zz", authorization } }), /not an exact EVM authorization/],
    ["a from that is not an address", withAuthorization({ from: "0x12" }), /from and to must be addresses/],
    ["a short nonce", withAuthorization({ nonce: "0x01" }), /nonce must be 32 bytes/],
    ["a value in hex", withAuthorization({ value: "0x1388" }), /value must be a decimal string/],
    ["a negative validBefore", withAuthorization({ validBefore: "-1" }), /validBefore must be a decimal string/],
    ["a number where a string belongs", withAuthorization({ value: 5000 }), /value must be a decimal string/],
  ])("refuses %s with the reason (a 402, never a 500)", (_name, header, reason) => {
    expect(readPayment({ "payment-signature": header })).toMatch(reason);
  });
});

describe("payment requirements", () => {
  it("quote the amount in USDC atomic units, which equal micro-USD (6 decimals)", () => {
    const resource = { url: "http://127.0.0.1/api/v1/screenshot", description: "d", mimeType: "image/png" };
    expect(requirementsV2(5_000)).toMatchObject({ scheme: "exact", amount: "5000", extra: { name: "USD Coin", version: "2" } });
    expect(requirementsV1(10_000, resource)).toMatchObject({ scheme: "exact", maxAmountRequired: "10000", resource: resource.url });
  });
});

describe("payment-identifier", () => {
  const withId = (id: unknown) => ({ "payment-signature": b64({ ...payload, extensions: { "payment-identifier": { info: { required: false, id } } } }) });

  it("advertises what the official extension package declares", () => {
    expect(PAYMENT_IDENTIFIER_EXTENSION).toEqual(declarePaymentIdentifierExtension(false));
  });

  it("reads the id a payment carries; none without the extension or without a payment", () => {
    expect(paymentIdentifierOf(withId("pay_7d5d747be160e280504c099d984bcfe0"))).toBe("pay_7d5d747be160e280504c099d984bcfe0");
    expect(paymentIdentifierOf({ "payment-signature": b64(payload) })).toBeNull();
    expect(paymentIdentifierOf({ "payment-signature": b64({ ...payload, extensions: { "payment-identifier": { info: { required: false } } } }) })).toBeNull();
    expect(paymentIdentifierOf({})).toBeNull();
    // A header that is not a payment is verifyPayment's to refuse (402 with the reason), not an id's.
    expect(paymentIdentifierOf({ "payment-signature": "%%%" })).toBeNull();
  });

  it.each([
    ["too short", "pay_short"],
    ["too long", "p".repeat(129)],
    ["a space", "pay 7d5d747be160e280"],
    ["not a string", 1234567890123456],
  ])("an id that is %s: 400 INVALID_PARAMS naming the extension", (_, id) => {
    expect(() => paymentIdentifierOf(withId(id))).toThrow(
      expect.objectContaining({ code: "INVALID_PARAMS", message: expect.stringMatching(/^payment-identifier:/) }),
    );
  });
});
