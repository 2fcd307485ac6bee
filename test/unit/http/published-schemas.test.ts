import { Ajv2020 } from "ajv/dist/2020.js";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import {
  animateRequest,
  contentRequest,
  contentToolRequest,
  htmlScreenshotRequest,
  metadataRequest,
  screenshotRequest,
  signupRequest,
} from "../../../lib/api/schemas.js";
import { discoveryOf } from "../../../lib/http/discovery.js";
import { openApiDocument } from "../../../lib/http/openapi.js";
import { tools } from "../../../lib/mcp/tools.js";
import { routeById } from "../../../lib/routes.js";
import { arbitraryOf } from "../../helpers/schema-bodies.js";

// The documents describe what the service takes: bodies written from each published request schema
// (OpenAPI, the x402 discovery manifest and the 402's bazaar extension, MCP tools' inputSchema) are accepted by the service's own
// validation, but for the two rules JSON Schema cannot state, which the documents say in words
// (the output-pixel cap, a product of fields; a cookie's domain against the URL's host; an
// animation's holds against its duration, and its frames x their size against what can be made).

type Json = Record<string, any>;
const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: false });
const INEXPRESSIBLE = [
  /Mpx; at most/,
  /must be the URL's host .* or a domain above it/,
  /with holdStart, must leave time to scroll/,
  /frames of \d+x\d+ as \w+ is more than an answer at once can make/,
  /frames of \d+x\d+ as \w+ need about [\d,]+ MB to encode/,
  /frames of \d+x\d+ device px are larger than 3840x2160/,
  // A proxy on a private literal address: the guard's address policy, not a pattern.
  /proxy: is refused: a private address/,
  // Percent-escapes that decode to bytes which are not UTF-8.
  /proxy: must percent-encode its username and password as UTF-8/,
];

/** Bodies from `published` the schema accepts, and what the service says of each. */
function tryBodies(published: Json, service: z.ZodType, runs = 800) {
  const valid = ajv.compile(published);
  const bodies = fc.sample(arbitraryOf(published), { numRuns: runs, seed: 39 }).filter((body) => valid(body));
  const refused = bodies.flatMap((body) => {
    const parsed = service.safeParse(body);
    return parsed.success ? [] : [{ body, messages: parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`) }];
  });
  return { bodies, refused };
}

/**
 * Bodies written from `published` are taken, but for the rules it says in words; at most `refusedShare`
 * of them are refused for those (an animation's bound on its frames refuses many random ones: a
 * random body asks up to 30 s at 60 fps at 3840 px).
 */
function expectTaken(name: string, published: Json, service: z.ZodType, refusedShare = 0.05) {
  const { bodies, refused } = tryBodies(published, service);
  // Enough bodies got through the schema for the figure to mean something.
  expect(bodies.length, name).toBeGreaterThanOrEqual(100);
  // Nothing is refused for a rule the document could state but does not.
  for (const { body, messages } of refused) {
    for (const message of messages)
      expect(
        INEXPRESSIBLE.some((rule) => rule.test(message)),
        `${name}: ${message}\n${JSON.stringify(body)}`,
      ).toBe(true);
  }
  expect(refused.length / bodies.length, name).toBeLessThanOrEqual(refusedShare);
}

const document = openApiDocument("https://shotline.example", "test") as Json;
const bodyOf = (path: string) => document.paths[path].post.requestBody.content["application/json"].schema as Json;

describe("published request schemas", () => {
  it("OpenAPI: bodies written from each request schema are accepted", () => {
    expectTaken("screenshot", bodyOf("/api/v1/screenshot"), screenshotRequest);
    expectTaken("html-to-screenshot", bodyOf("/api/v1/html-to-screenshot"), htmlScreenshotRequest);
    expectTaken("content", bodyOf("/api/v1/content"), contentRequest);
    expectTaken("animate", bodyOf("/api/v1/animate"), animateRequest, 0.9);
    expectTaken("metadata", bodyOf("/api/v1/metadata"), metadataRequest);
    expectTaken("signup", bodyOf("/api/v1/signup"), signupRequest);
  });

  it("the x402 discovery manifest and MCP tools: bodies written from their schemas are accepted", () => {
    for (const [id, schema] of [
      ["screenshot", screenshotRequest],
      ["html-to-screenshot", htmlScreenshotRequest],
      ["content", contentRequest],
      ["animate", animateRequest],
    ] as const) {
      const discovery = discoveryOf(routeById(id))!;
      const share = id === "animate" ? 0.9 : 0.05;
      expectTaken(`discovery ${id}`, discovery.input.inputSchema as Json, schema, share);
      // The compact schema of the 402's bazaar extension: the headline fields and the rules across fields.
      expectTaken(`bazaar ${id}`, (discovery.bazaar.schema as Json).properties.input.properties.body, schema, share);
    }
    const tool = (name: string) => tools.find((t) => t.name === name)!.inputSchema() as Json;
    expectTaken("mcp screenshot", tool("screenshot"), screenshotRequest);
    expectTaken("mcp html_to_screenshot", tool("html_to_screenshot"), htmlScreenshotRequest);
    expectTaken("mcp read_page", tool("read_page"), contentToolRequest);
    expectTaken("mcp animate", tool("animate"), animateRequest, 0.9);
  });

  it("states what it refuses: bodies breaking a cross-field rule are invalid by the schema too", () => {
    const valid = ajv.compile(bodyOf("/api/v1/screenshot"));
    const url = "https://example.com";
    for (const body of [
      { url, style: "mockup", format: "pdf" },
      { url, selector: "h1", clip: { x: 0, y: 0, width: 10, height: 10 } },
      { url, selector: "h1", fullPage: true },
      { url, omitBackground: true, format: "jpeg" },
      { url, fit: "cover" },
      { url, pdf: { paper: "A4" } },
      { url, format: "pdf", pdf: { margin: "1cm" } },
      { url, format: "pdf", pdf: { paper: "A4", margin: "6cm" } },
      { url, format: "pdf", pdf: { paper: "A4", pageRanges: "0-3" } },
      { url, timezone: "Mars/Olympus" },
      { url, locale: "english" },
      { url, headers: { Authorization: "x" } },
      { url, headers: { "Proxy-Foo": "x" } },
      { url, background: "red" },
    ]) {
      expect(valid(body), JSON.stringify(body)).toBe(false);
      expect(screenshotRequest.safeParse(body).success, JSON.stringify(body)).toBe(false);
    }
    const content = ajv.compile(bodyOf("/api/v1/content"));
    for (const body of [
      {},
      { url, html: "<p>x</p>" },
      { html: "<p>x</p>", cookies: [{ name: "a", value: "b" }] },
      { url, render: "never", screenshot: true },
      { url, render: "never", js: "1" },
    ]) {
      expect(content(body), JSON.stringify(body)).toBe(false);
      expect(contentRequest.safeParse(body).success, JSON.stringify(body)).toBe(false);
    }
    const animation = ajv.compile(bodyOf("/api/v1/animate"));
    for (const body of [{}, { url, html: "<p>x</p>" }, { html: "<p>x</p>", headers: { "X-A": "b" } }, { url, mode: "live" }, { url, scroll: { to: -1 } }]) {
      expect(animation(body), JSON.stringify(body)).toBe(false);
      expect(animateRequest.safeParse(body).success, JSON.stringify(body)).toBe(false);
    }
  });
});
