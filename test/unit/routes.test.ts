import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { withHttp } from "../../lib/http/with-http.js";
import { consumers, httpRoutes, matchRoute, pathParams, priceOf, type RouteId, routeById, routes, schedules, workers } from "../../lib/routes.js";

describe("the route table", () => {
  it("has unique ids and unique method + path pairs, and exactly one catch-all", () => {
    expect(new Set(routes.map((r) => r.id)).size).toBe(routes.length);
    expect(new Set(httpRoutes.map((r) => `${r.method} ${r.path}`)).size).toBe(httpRoutes.length);
    expect(routes.length - httpRoutes.length).toBe(1);
  });

  it("prices every priced route and no other", () => {
    for (const route of routes) {
      expect(route.price !== null, route.id).toBe(route.access === "priced" || route.access === "signed");
      // A mockup costs more; content, animations and maps have no mockup (one price).
      const onePrice = route.id === "content" || route.id === "animate" || route.id === "map";
      if (route.price) expect(route.price.mockup, route.id).toBeGreaterThan(onePrice ? route.price.standard - 1 : route.price.standard);
    }
    expect(routeById("animate").price).toEqual({ standard: 20_000, mockup: 20_000 });
    expect(routeById("map").price).toEqual({ standard: 1_000, mockup: 1_000 });
    const content = routeById("content").price!;
    expect(content).toMatchObject({ standard: 2_000, mockup: 2_000 });
    // A snapshot costs its screenshot's price: the content comes with it.
    expect(priceOf(content, { url: "u" })).toBe(2_000);
    expect(priceOf(content, { url: "u", screenshot: false })).toBe(2_000);
    expect(priceOf(content, { url: "u", screenshot: true })).toBe(5_000);
    expect(priceOf(content, { url: "u", screenshot: { format: "webp" } })).toBe(5_000);
    expect(priceOf(content, { url: "u", screenshot: { style: "mockup" } })).toBe(10_000);
    // The top-level style of a content request is not a screenshot's (the schema refuses it).
    expect(priceOf(content, { url: "u", style: "mockup" })).toBe(2_000);
    expect(priceOf(routeById("screenshot").price!, { url: "u", screenshot: { style: "mockup" } })).toBe(5_000);
    for (const odd of [null, "text", 5, []]) expect(priceOf(content, odd)).toBe(2_000);
  });

  it("limits every route that is not open, and no open one", () => {
    for (const route of routes) expect(route.limits.length > 0, route.id).toBe(route.access !== "open");
  });

  it("keeps money and keys out of caches", () => {
    for (const route of routes.filter((r) => r.access === "key" || r.id === "signup")) expect(route.noStore, route.id).toBe(true);
  });

  it("gives render routes the render timeout code and every other route the generic one", () => {
    for (const route of routes) expect(route.timeoutCode, route.id).toBe(route.browser ? "RENDER_TIMEOUT" : "TIMEOUT");
  });

  it("has one handler file per row (routes, schedules, workers and consumers) and no handler without a row", () => {
    const files = readdirSync("functions").map((f) => f.replace(/\.ts$/, ""));
    expect(files.sort()).toEqual([...routes, ...schedules, ...workers, ...consumers].map((r) => r.id).sort());
  });

  // Compiling every handler's imports: a few seconds alone, much longer on a busy machine.
  it("loads every handler module with its own row", { timeout: 120_000 }, async () => {
    for (const route of routes) {
      const module = (await import(`../../functions/${route.id}.ts`)) as { handler: unknown };
      expect(typeof module.handler, route.id).toBe("function");
    }
  });

  it("fails as a handler module loads when its route id is not in the table (a typo cannot serve anything free)", () => {
    expect(() => withHttp({ route: "screenshott" as RouteId }, async () => ({ kind: "json", status: 200, body: {}, headers: {} }))).toThrow(
      'lib/routes.ts has no route "screenshott"',
    );
    expect(() => routeById("nope" as RouteId)).toThrow();
  });

  it("matches path templates one segment per parameter, decoded; a malformed escape matches nothing", () => {
    expect(pathParams("/api/v1/signing-keys/{keyId}", "/api/v1/signing-keys/sk_a%2Db")).toEqual({ keyId: "sk_a-b" });
    expect(pathParams("/api/v1/signing-keys/{keyId}", "/api/v1/signing-keys/a/b")).toBeNull();
    expect(pathParams("/api/v1/signing-keys/{keyId}", "/api/v1/signing-keys/%E0%A4%A")).toBeNull();
    expect(pathParams("/api/v1/usage", "/api/v1/usage")).toEqual({});
    expect(matchRoute("DELETE", "/api/v1/signing-keys/sk_1").route?.id).toBe("signing-keys-revoke");
    expect(matchRoute("GET", "/api/v1/screenshot").route?.id).toBe("signed-screenshot");
    expect(matchRoute("PUT", "/api/v1/screenshot").allowed).toEqual(["POST", "GET"]);
  });
});
