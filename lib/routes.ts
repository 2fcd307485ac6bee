// THE route table. stacks/Api.ts turns each row into an API Gateway route + one Lambda, and
// lib/local/server.ts serves the same rows on a Node HTTP server by calling the same handlers.

export type HttpMethod = "GET" | "POST" | "PATCH";

/** Price in micro-USD (1 USD = 1,000,000 = USDC atomic units); `mockup` applies when style is "mockup". */
export interface RoutePrice {
  readonly standard: number;
  readonly mockup: number;
}

export interface Route {
  /** Stable id; also the handler file: functions/<id>.ts exporting `handler`. */
  readonly id: string;
  readonly method: HttpMethod;
  readonly path: string;
  /** Lambda memory in MB. */
  readonly memoryMB: number;
  /** Lambda timeout in seconds. */
  readonly timeoutSeconds: number;
  /** Null when the endpoint is free or not a per-request charge (top-up quotes its own amount). */
  readonly price: RoutePrice | null;
  /** Needs the Chromium layer and fonts. */
  readonly browser: boolean;
  /**
   * Who may call it: "priced" (API key charged per request, or x402 without Authorization), "key"
   * (API key only), "public" (anyone; rate-limited per key or IP), "open" (anyone, no limit).
   */
  readonly access: "priced" | "key" | "public" | "open";
  /**
   * What the function may touch; stacks/Api.ts grants and configures exactly these ("x402": takes
   * USDC payments; "dashboard-files": serves dashboard/, copied next to the handler).
   */
  readonly uses: readonly ("table" | "bucket" | "x402" | "dashboard-files")[];
}

/** Standard screenshot price, micro-USD ($0.005). */
export const PRICE_SCREENSHOT = 5_000;
/** Mockup price, micro-USD ($0.01). */
export const PRICE_MOCKUP = 10_000;

const RENDER_PRICE: RoutePrice = { standard: PRICE_SCREENSHOT, mockup: PRICE_MOCKUP };

// API Gateway HTTP APIs cut every integration at 30 s, so render functions get 30 s of Lambda time
// and keep their own request deadline below it (lib/render) to always answer with our JSON error.
const RENDER = { memoryMB: 2048, timeoutSeconds: 30, browser: true } as const;
const LIGHT = { memoryMB: 256, timeoutSeconds: 10, browser: false } as const;

export const routes: readonly Route[] = [
  { id: "screenshot", method: "POST", path: "/api/v1/screenshot", ...RENDER, price: RENDER_PRICE, access: "priced", uses: ["table", "bucket", "x402"] },
  { id: "html-to-screenshot", method: "POST", path: "/api/v1/html-to-screenshot", ...RENDER, price: RENDER_PRICE, access: "priced", uses: ["table", "bucket", "x402"] },
  // Metadata may fall back to the browser for script-rendered pages, so it gets the layer too.
  { id: "metadata", method: "POST", path: "/api/v1/metadata", ...RENDER, memoryMB: 1536, price: null, access: "public", uses: ["table"] },
  { id: "usage", method: "GET", path: "/api/v1/usage", ...LIGHT, price: null, access: "key", uses: ["table"] },
  { id: "health", method: "GET", path: "/api/v1/health", ...LIGHT, price: null, access: "open", uses: [] },
  { id: "signup", method: "POST", path: "/api/v1/signup", ...LIGHT, price: null, access: "public", uses: ["table"] },
  { id: "account", method: "PATCH", path: "/api/v1/account", ...LIGHT, price: null, access: "key", uses: ["table"] },
  { id: "topup", method: "POST", path: "/api/v1/topup", ...LIGHT, timeoutSeconds: 30, price: null, access: "key", uses: ["table", "x402"] },
  { id: "dashboard", method: "GET", path: "/dashboard", ...LIGHT, price: null, access: "open", uses: ["dashboard-files"] },
];

/** The catch-all function: answers 404 / 405 for anything the table does not route. */
export const fallbackRoute = { id: "fallback", ...LIGHT, access: "open" } as const;

/** Finds the route for a method and path; `allowed` lists the path's methods when only the method is wrong. */
export function matchRoute(method: string, path: string): { route?: Route; allowed: HttpMethod[] } {
  const samePath = routes.filter((r) => r.path === path);
  const route = samePath.find((r) => r.method === method.toUpperCase());
  return { route, allowed: samePath.map((r) => r.method) };
}
