import { TimeoutError } from "puppeteer-core";
import { describe, expect, it } from "vitest";
import { translateNavigationError } from "../../../lib/render/errors.js";
import type { GuardSession } from "../../../lib/render/guard/network-guard.js";

const guard = (failures: [string, string][]) => ({ failures: new Map(failures) }) as unknown as GuardSession;
const REFUSED = "refused localhost:4000: a private address";
const tunnelFailed = new Error("net::ERR_TUNNEL_CONNECTION_FAILED at http://127.0.0.1:3000/redirect");

describe("navigation failures in words", () => {
  it("gives the guard's reason for the last document seen", () => {
    const error = translateNavigationError(tunnelFailed, "https://localhost:4000/", guard([["localhost:4000", REFUSED]]), 5);
    expect([error.code, error.message]).toEqual(["INVALID_URL", `The page could not be loaded: ${REFUSED}.`]);
  });

  it("gives the guard's reason when the redirect's last hop was never announced (only the first hop seen)", () => {
    const error = translateNavigationError(tunnelFailed, "http://127.0.0.1:3000/redirect", guard([["localhost:4000", REFUSED]]), 5);
    expect(error.message).toBe(`The page could not be loaded: ${REFUSED}.`);
  });

  it("words Chromium's error when the guard failed nothing, and names an unknown one", () => {
    const refused = new Error("net::ERR_CONNECTION_REFUSED at http://example.com/");
    expect(translateNavigationError(refused, "http://example.com/", guard([]), 5).message).toBe(
      "The page could not be loaded: the server refused the connection.",
    );
    const odd = new Error("net::ERR_SOMETHING_NEW at http://example.com/");
    expect(translateNavigationError(odd, "http://example.com/", guard([]), 5).message).toBe(
      "The page could not be loaded: the browser reported ERR_SOMETHING_NEW.",
    );
  });

  it("a timeout is RENDER_TIMEOUT with the page-load limit, anything else RENDER_ERROR", () => {
    expect(translateNavigationError(new TimeoutError("slow"), undefined, guard([["localhost:4000", REFUSED]]), 7).message).toBe(
      "The page did not finish loading within 7 s.",
    );
    expect(translateNavigationError(new Error("Target closed"), undefined, guard([]), 7).code).toBe("RENDER_ERROR");
  });
});
