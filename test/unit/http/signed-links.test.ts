import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { screenshotRequest } from "../../../lib/api/schemas.js";
import { canonicalQuery, queryBody, queryParams, signatureOf } from "../../../lib/http/signed-links.js";

// The signing rule of docs/api.md ("Signed links"); the keys and the whole flow run against
// DynamoDB Local in test/integration/signed-links.test.ts.
describe("signed links", () => {
  it("sign every parameter but signature, sorted by name, RFC 3986-encoded, joined with &", () => {
    const params = queryParams(
      "url=https%3A%2F%2Fexample.com%2Fa%20b%3Fq%3D1&width=1280&keyId=sk_1&expires=1900000000&signature=ff&hideSelectors=%5B%22%23x%22%5D&css=a+b*",
    );
    const canonical = "css=a%20b%2A&expires=1900000000&hideSelectors=%5B%22%23x%22%5D&keyId=sk_1&url=https%3A%2F%2Fexample.com%2Fa%20b%3Fq%3D1&width=1280";
    expect(canonicalQuery(params)).toBe(canonical);
    expect(signatureOf("s3cret", params)).toBe(createHmac("sha256", "s3cret").update(canonical).digest("hex"));
  });

  it("refuses a parameter given twice", () => {
    expect(() => queryParams("url=a&url=b")).toThrow(/url: given twice/);
  });

  it("reads render fields as the schema takes them: strings as they are, anything else as JSON text", () => {
    const body = queryBody(
      'url=https://example.com&format=png&width=400&fullPage=true&hideSelectors=["%23a"]&css=1&keyId=k&expires=1&signature=s',
      screenshotRequest,
    );
    expect(body).toEqual({ url: "https://example.com", format: "png", width: 400, fullPage: true, hideSelectors: ["#a"], css: "1" });
    // Not JSON: left as text for validation to refuse by name.
    expect(queryBody("width=wide", screenshotRequest)).toEqual({ width: "wide" });
  });
});
