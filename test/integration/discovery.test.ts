// How an agent finds Shotline and learns to call it: x402's bazaar discovery in every paid 402 (v2
// header, compact; v1 body, every field), the well-known manifest, and /llms.txt. Checked with the
// official @x402/extensions validators, and the advertised example is run against the stack.
import { extractDiscoveryInfoV1, isDiscoverableV1, validateDiscoveryExtension, validateDiscoveryExtensionSpec } from "@x402/extensions/bazaar";
import { describe, expect, inject, it } from "vitest";
import { animateRequest, contentRequest, htmlScreenshotRequest, mapRequest, screenshotRequest } from "../../lib/api/schemas.js";
import { validate } from "../../lib/http/validate.js";
import { PRICES } from "../../lib/routes.js";
import { postJson } from "../helpers/api.js";
import { decode } from "../helpers/x402.js";

const base = () => inject("baseUrl");
const PAID = [
  ["/api/v1/screenshot", screenshotRequest, PRICES.screenshot, 40, "image/png", /\$0\.005/],
  ["/api/v1/html-to-screenshot", htmlScreenshotRequest, PRICES.screenshot, 40, "image/png", /\$0\.005/],
  ["/api/v1/content", contentRequest, PRICES.content, 5, "application/json", /\$0\.002/],
  ["/api/v1/animate", animateRequest, PRICES.animate, 5, "video/mp4", /\$0\.02\b/],
  ["/api/v1/map", mapRequest, PRICES.map, 3, "application/json", /\$0\.001/],
] as const;
/** The 402 a valid request without Authorization gets. */
const unpaid = (path: string) => postJson(path, path.endsWith("/html-to-screenshot") ? { html: "<p>x</p>" } : { url: `${inject("fixtureUrl")}/simple` }, {});

describe("x402 discovery in the 402", () => {
  it.each(PAID)("%s: the v2 header carries the bazaar extension and service metadata, under 8 KB", async (path, schema, _price, _fields, mimeType, price) => {
    const res = await unpaid(path);
    expect(res.status).toBe(402);
    const header = res.headers.get("payment-required")!;
    console.log(`${path}: PAYMENT-REQUIRED is ${header.length} bytes`);
    expect(header.length).toBeLessThan(8 * 1024);
    const required = decode(header);
    expect(required.resource).toMatchObject({ url: `${base()}${path}`, serviceName: "Shotline", mimeType });
    expect(required.resource.tags).toContain("screenshot");
    expect(required.resource.description).toMatch(price);
    expect(required.resource.discovery).toBeUndefined();
    const bazaar = required.extensions.bazaar;
    expect(validateDiscoveryExtension(bazaar)).toEqual({ valid: true });
    expect(validateDiscoveryExtensionSpec(bazaar).valid).toBe(true);
    expect(bazaar.info.input).toMatchObject({ type: "http", method: "POST", bodyType: "json" });
    // The example is a body the route accepts.
    expect(() => validate(schema, bazaar.info.input.body)).not.toThrow();
  });

  it.each(PAID)("%s: the v1 body's requirements carry outputSchema with every field, discoverable", async (path, schema) => {
    const body = (await (await unpaid(path)).json()) as { accepts: Record<string, any>[] };
    const requirements = body.accepts[0]!;
    expect(requirements.outputSchema.input.discoverable).toBe(true);
    expect(isDiscoverableV1(requirements as never)).toBe(true);
    const info = extractDiscoveryInfoV1(requirements as never) as { input: { method: string; body: Record<string, unknown> } };
    expect(info.input.method).toBe("POST");
    expect(Object.keys(info.input.body).sort()).toEqual(Object.keys(schema.shape).sort());
  });

  it("the advertised example, sent with a key, answers as the advertised output", async () => {
    const required = decode((await unpaid("/api/v1/html-to-screenshot")).headers.get("payment-required"));
    const { body } = required.extensions.bazaar.info.input;
    const res = await postJson("/api/v1/html-to-screenshot", body);
    expect(res.status).toBe(200);
    const answer = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(answer).sort()).toEqual(Object.keys(required.extensions.bazaar.info.output.example).sort());
  });
});

describe("the well-known manifest and /llms.txt", () => {
  it("/.well-known/x402.json lists each paid render with the live 402's terms and its full input schema", async () => {
    const res = await fetch(`${base()}/.well-known/x402.json`);
    expect(res.status).toBe(200);
    const manifest = (await res.json()) as { x402Version: number; lastUpdated: number; items: Record<string, any>[] };
    expect(manifest.x402Version).toBe(2);
    expect(manifest.lastUpdated).toBeGreaterThan(1_700_000_000);
    expect(manifest.items.map((item) => item.resource.url)).toEqual(PAID.map(([path]) => `${base()}${path}`));
    for (const [path, schema, price, fields] of PAID) {
      const item = manifest.items.find((i) => i.resource.url.endsWith(path))!;
      const live = decode((await unpaid(path)).headers.get("payment-required"));
      expect(item.accepts).toEqual(live.accepts);
      expect(item.accepts[0].amount).toBe(String(price));
      expect(item.type).toBe("http");
      expect(item.input).toMatchObject({ method: "POST", bodyType: "json" });
      expect(Object.keys(item.input.inputSchema.properties).length).toBeGreaterThan(fields);
      expect(() => validate(schema, item.input.body)).not.toThrow();
    }
  });

  it("/llms.txt is plain text naming every endpoint with this origin, the prices and how to pay, and its links answer", async () => {
    const res = await fetch(`${base()}/llms.txt`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    const text = await res.text();
    expect(text.startsWith("# Shotline\n")).toBe(true);
    for (const path of ["/api/v1/screenshot", "/api/v1/html-to-screenshot", "/api/v1/map", "/api/v1/metadata", "/api/v1/signup", "/mcp"])
      expect(text).toContain(`${base()}${path}`);
    expect(text).toContain("$0.005");
    expect(text).toContain("$0.01");
    expect(text).toMatch(/PAYMENT-SIGNATURE/);
    for (const link of text.match(/http:\/\/[^\s)]+(?:x402\.json)/g) ?? []) expect((await fetch(link)).status, link).toBe(200);
  });

  it("public documents never name a forged Host (a cache that ignores Host would serve them to everyone)", async () => {
    const { request } = await import("node:http");
    const get = (path: string) =>
      new Promise<string>((resolve, reject) => {
        const req = request(`${base()}${path}`, { headers: { host: "evil.example" } }, (res) => {
          let body = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => (body += chunk));
          res.on("end", () => resolve(body));
        });
        req.on("error", reject);
        req.end();
      });
    for (const path of ["/llms.txt", "/openapi.json", "/.well-known/x402.json"]) expect(await get(path), path).not.toContain("evil.example");
  });
});
