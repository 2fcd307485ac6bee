import { describe, expect, it } from "vitest";
import { readPayment, requirementsV1, requirementsV2 } from "../../../lib/payments/x402.js";

const b64 = (value: unknown) => Buffer.from(typeof value === "string" ? value : JSON.stringify(value)).toString("base64");
const payload = { x402Version: 2, accepted: {}, payload: { signature: "0xabc", authorization: { value: "5000" } } };

describe("readPayment", () => {
  it("reads a v2 PAYMENT-SIGNATURE and a v1 X-PAYMENT header, and nothing when neither is sent", () => {
    expect(readPayment({ "payment-signature": b64(payload) })).toEqual({ version: 2, payload });
    expect(readPayment({ "x-payment": b64(payload) })).toEqual({ version: 1, payload });
    expect(readPayment({ authorization: "Bearer x" })).toBeNull();
  });

  it("prefers the v2 header when both are sent", () => {
    expect(readPayment({ "payment-signature": b64(payload), "x-payment": b64({ ...payload, x402Version: 1 }) })).toMatchObject({ version: 2 });
  });

  it.each([
    ["not base64 JSON", "%%%not-base64"],
    ["base64 of text that is not JSON", b64("hello")],
    ["JSON that is not an object", b64("42")],
    ["JSON null", b64("null")],
    ["an object without a payload", b64({ x402Version: 2 })],
    ["an empty header", ""],
  ])("calls %s malformed (a 402 with the reason, never a 500)", (_name, header) => {
    expect(readPayment({ "payment-signature": header })).toBe("malformed");
  });
});

describe("payment requirements", () => {
  it("quote the amount in USDC atomic units, which equal micro-USD (6 decimals)", () => {
    const resource = { url: "http://127.0.0.1/api/v1/screenshot", description: "d", mimeType: "image/png" };
    expect(requirementsV2(5_000)).toMatchObject({ scheme: "exact", amount: "5000", extra: { name: "USD Coin", version: "2" } });
    expect(requirementsV1(10_000, resource)).toMatchObject({ scheme: "exact", maxAmountRequired: "10000", resource: resource.url });
  });
});
