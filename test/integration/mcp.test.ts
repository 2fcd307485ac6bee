// The MCP server at /mcp through the local stack: the official @modelcontextprotocol/sdk client lists
// the tools and calls each with a key (charged as the REST call); a paying client built on @x402/core
// and @x402/evm pays a screenshot on the local chain per the x402 MCP transport; the stdio entry
// forwards to it; hostile and bad calls get errors, never charges.
import { resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { validateDiscoveryExtension } from "@x402/extensions/bazaar";
import sharp from "sharp";
import { erc20Abi, parseEventLogs } from "viem";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { z } from "zod";
import { screenshotRequest } from "../../lib/api/schemas.js";
import { FREE_CALLS } from "../../lib/mcp/tools.js";
import { PRICES, RENDERS_IN_FLIGHT } from "../../lib/routes.js";
import { getItem, putItem } from "../helpers/ledger.js";
import { callPaying, mcpClient, paymentRequiredOf } from "../helpers/mcp.js";
import { localPayer } from "../helpers/x402.js";

const base = inject("baseUrl");
const fixture = (path: string) => `${inject("fixtureUrl")}${path}`;
// An account of its own: other files charge the shared key at the same time.
let key = "";
let accountId = "";
const auth = { authorization: "" };
const balance = async () => ((await (await fetch(`${base}/api/v1/usage`, { headers: auth })).json()) as { balance_micro_usd: number }).balance_micro_usd;

type Content = CallToolResult["content"][number];
const ofType = <T extends Content["type"]>(result: CallToolResult, type: T) =>
  result.content.filter((c): c is Extract<Content, { type: T }> => c.type === type);

let keyed: Client;
let anonymous: Client;
beforeAll(async () => {
  const signup = await fetch(`${base}/api/v1/signup`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: `mcp-${Date.now()}@mcp.test` }),
  });
  ({ api_key: key, account_id: accountId } = (await signup.json()) as { api_key: string; account_id: string });
  auth.authorization = `Bearer ${key}`;
  keyed = await mcpClient(base, auth);
  anonymous = await mcpClient(base);
});
afterAll(async () => {
  await keyed.close();
  await anonymous.close();
});

describe("tools/list", () => {
  it("lists screenshot, html_to_screenshot, animate, read_page, scrape, map_site, crawl_site, get_crawl, metadata, the monitors' tools and usage, with the REST schemas' JSON Schema and descriptions for a model", async () => {
    const { tools } = await keyed.listTools();
    expect(tools.map((t) => t.name)).toEqual([
      "screenshot",
      "html_to_screenshot",
      "animate",
      "read_page",
      "scrape",
      "map_site",
      "crawl_site",
      "get_crawl",
      "metadata",
      "create_monitor",
      "list_monitors",
      "check_monitor",
      "get_check",
      "usage",
    ]);
    // Priced tools are not idempotent (a second call is charged again); free ones are.
    expect(tools.map((t) => t.annotations?.idempotentHint)).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
      false,
      true,
      true,
      false,
      true,
      false,
      true,
      true,
    ]);
    // Making a monitor and checking one change the account's state; the rest only read.
    expect(tools.filter((t) => !t.annotations?.readOnlyHint).map((t) => t.name)).toEqual(["crawl_site", "create_monitor", "check_monitor"]);
    expect(tools.find((t) => t.name === "scrape")!.inputSchema.required).toContain("extract");
    const screenshot = tools[0]!;
    const rest = z.toJSONSchema(screenshotRequest, { io: "input", unrepresentable: "any" }) as { properties: Record<string, unknown> };
    // Every render field, as the REST route takes it, but the REST-only answer format.
    expect(Object.keys(screenshot.inputSchema.properties ?? {}).sort()).toEqual(
      Object.keys(rest.properties)
        .filter((name) => name !== "responseFormat")
        .sort(),
    );
    expect(screenshot.inputSchema.properties?.frame).toEqual(rest.properties.frame);
    expect(screenshot.inputSchema.required).toEqual(["url"]);
    for (const tool of tools) expect(tool.description!.length, tool.name).toBeGreaterThan(100);
    expect(tools[0]!.description).toMatch(/\$0\.005/);
  });
});

describe("renders in flight", () => {
  it(`one account's 24 slow renders at once: ${RENDERS_IN_FLIGHT} run, the rest are 429 at once, free; another account is served meanwhile`, async () => {
    const signup = async (name: string) =>
      (
        (await (
          await fetch(`${base}/api/v1/signup`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ email: `${name}-${Date.now()}@mcp.test` }),
          })
        ).json()) as { api_key: string }
      ).api_key;
    const [greedy, other] = await Promise.all([signup("greedy"), signup("other")]);
    const [greedyClient, otherClient] = await Promise.all([
      mcpClient(base, { authorization: `Bearer ${greedy}` }),
      mcpClient(base, { authorization: `Bearer ${other}` }),
    ]);
    try {
      // Each holds its page for 4 s: all 24 are in flight together.
      const slow = Array.from(
        { length: 24 },
        (_, i) =>
          greedyClient.callTool({
            name: "screenshot",
            arguments: { url: fixture(`/simple?greedy=${i}`), width: 320, height: 200, delay: 4_000 },
          }) as Promise<CallToolResult>,
      );
      await new Promise((resolve) => setTimeout(resolve, 500));
      const asked = Date.now();
      const served = (await otherClient.callTool({
        name: "screenshot",
        arguments: { url: fixture("/simple?other"), width: 320, height: 200 },
      })) as CallToolResult;
      const waited = Date.now() - asked;
      expect(served.isError, JSON.stringify(served.content)).toBeFalsy();
      expect(waited).toBeLessThan(10_000);
      const answers = await Promise.all(slow);
      const ran = answers.filter((a) => !a.isError);
      const refused = answers.filter((a) => a.isError);
      // Never more than the account's number in flight; all 24 were in flight together, so exactly that many ran.
      expect(ran).toHaveLength(RENDERS_IN_FLIGHT);
      for (const answer of refused) expect(JSON.stringify(answer.content)).toMatch(/RATE_LIMITED.*renders in flight/);
      const usage = (await (await fetch(`${base}/api/v1/usage`, { headers: { authorization: `Bearer ${greedy}` } })).json()) as { balance_micro_usd: number };
      expect(usage.balance_micro_usd).toBe(250_000 - RENDERS_IN_FLIGHT * PRICES.screenshot);
    } finally {
      await Promise.all([greedyClient.close(), otherClient.close()]);
    }
  }, 90_000);
});

describe("tools/call with an API key", () => {
  it("create_monitor, list_monitors and check_monitor: a page watched, checked by an agent, its change reported; refused to x402 payers", async () => {
    const page = `mcp-${Date.now()}`;
    const url = fixture(`/monitor/article?id=${page}`);
    const made = (await keyed.callTool({ name: "create_monitor", arguments: { url, every: "1d", width: 800, height: 600, mode: "text" } })) as CallToolResult;
    expect(made.isError).toBeFalsy();
    const monitor = made.structuredContent as { id: string; status: string; first_check_id: string };
    expect(monitor.status).toBe("active");
    const listed = (await keyed.callTool({ name: "list_monitors", arguments: {} })) as CallToolResult;
    expect((listed.structuredContent as { monitors: { id: string }[] }).monitors.map((m) => m.id)).toContain(monitor.id);
    type Check = { id: string; outcome?: string; status: string; text?: { added: string[] }; charged_micro_usd: number };
    // check_monitor answers at once (it holds no instance while the check runs); get_check reads it until it is done.
    const checkMonitor = async () => {
      const asked = Date.now();
      const result = (await keyed.callTool({ name: "check_monitor", arguments: { monitorId: monitor.id } })) as CallToolResult;
      expect(result.isError).toBeFalsy();
      expect(Date.now() - asked).toBeLessThan(5_000);
      let answer = result.structuredContent as Check;
      // Queued, or (asked while the first check runs) that one.
      expect(["queued", "running"]).toContain(answer.status);
      while (answer.status !== "done") {
        await new Promise((resolve) => setTimeout(resolve, 200));
        const read = (await keyed.callTool({ name: "get_check", arguments: { monitorId: monitor.id, checkId: answer.id } })) as CallToolResult;
        expect(read.isError).toBeFalsy();
        answer = read.structuredContent as Check;
      }
      return answer;
    };
    // Checked until one compares with a baseline (the first check, queued when it was made, may still run).
    let check = await checkMonitor();
    for (let n = 0; n < 3 && check.outcome !== "unchanged"; n++) check = await checkMonitor();
    expect(check.outcome).toBe("unchanged");
    await fetch(fixture(`/monitor/set?id=${page}&v=edited`));
    const before = await balance();
    check = await checkMonitor();
    expect(check).toMatchObject({ outcome: "changed", charged_micro_usd: PRICES.content });
    expect(check.text!.added).toEqual(["Paragraph 6: the price is now forty-two dollars a month, not nineteen."]);
    expect(await balance()).toBeLessThan(before);
    // Another account's monitor (here: none of the anonymous caller's) and no key: refused, nothing made.
    const anonymousCheck = (await anonymous.callTool({ name: "check_monitor", arguments: { monitorId: monitor.id } })) as CallToolResult;
    expect(anonymousCheck.isError).toBe(true);
    expect(JSON.stringify(anonymousCheck.content)).toContain("UNAUTHORIZED");
  }, 120_000);

  it("list_monitors and create_monitor never answer the secrets a monitor sends its page: each is there, as [redacted]", async () => {
    // An account of its own, so its monitor's first check charges no other test's balance.
    const signup = await fetch(`${base}/api/v1/signup`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: `mcp-secrets-${Date.now()}@mcp.test` }),
    });
    const own = await mcpClient(base, { authorization: `Bearer ${((await signup.json()) as { api_key: string }).api_key}` });
    try {
      const url = fixture(`/monitor/article?id=mcp-secrets-${Date.now()}`);
      const secrets = { cookies: [{ name: "sid", value: "MCPCOOKIE42" }], headers: { "X-Key": "xy" }, httpAuth: { username: "ann", password: "MCPPASS99" } };
      const made = (await own.callTool({
        name: "create_monitor",
        arguments: { url, every: "1d", width: 800, height: 600, mode: "text", ...secrets },
      })) as CallToolResult;
      expect(made.isError, JSON.stringify(made.content)).toBeFalsy();
      const listed = (await own.callTool({ name: "list_monitors", arguments: {} })) as CallToolResult;
      const shown = {
        cookies: [{ name: "sid", value: "[redacted]" }],
        headers: { "X-Key": "[redacted]" },
        httpAuth: { username: "ann", password: "[redacted]" },
      };
      expect(made.structuredContent).toMatchObject(shown);
      expect((listed.structuredContent as { monitors: unknown[] }).monitors).toEqual([expect.objectContaining(shown)]);
      // Nor in the text the model reads.
      for (const answer of [made, listed]) {
        const text = ofType(answer, "text")
          .map((c) => c.text)
          .join("\n");
        expect(text).toContain("[redacted]");
        for (const value of ["MCPCOOKIE42", '"xy"', "MCPPASS99"]) expect(text).not.toContain(value);
        for (const value of ["MCPCOOKIE42", '\\"xy\\"', "MCPPASS99"]) expect(JSON.stringify(answer)).not.toContain(value);
      }
    } finally {
      await own.close();
    }
  }, 60_000);

  it("screenshot with capture: the console and failed requests linked on the service's own origin, for the model to read", async () => {
    const result = (await keyed.callTool({
      name: "screenshot",
      arguments: { url: fixture("/logs/page?id=mcp"), width: 400, height: 300, capture: { console: true, network: true } },
    })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    const answer = result.structuredContent as Record<string, { url: string; messages?: number; failures?: number }>;
    expect(answer.console!.url.startsWith(`${base}/api/v1/outputs/`)).toBe(true);
    expect(answer.network!.url).toMatch(/\.json$/);
    // The output link redirects to the stored log, as an image's does.
    const log = (await (await fetch(answer.console!.url)).json()) as { messages: { text: string }[] };
    expect(log.messages.map((m) => m.text)).toContain("bad thing");
    expect(log.messages).toHaveLength(answer.console!.messages!);
  });

  it("read_page: the page's main content as Markdown text for the model, the whole answer structured, charged $0.002; scrape answers its fields", async () => {
    const before = await balance();
    const result = (await keyed.callTool({ name: "read_page", arguments: { url: `${inject("fixtureUrl")}/content/article` } })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    const [text] = ofType(result, "text");
    expect(text!.text).toMatch(/^The article\nhttp:\/\/[^\n]+\/content\/article\n\n# The headline\n/);
    expect(text!.text).not.toContain("HIDDEN-DISPLAY");
    expect(result.structuredContent).toMatchObject({ title: "The article", rendered: false, markdown: expect.stringContaining("| alpha | 1 |") });
    expect(result._meta).toMatchObject({ "shotline/charged-micro-usd": PRICES.content });
    const scraped = (await keyed.callTool({
      name: "scrape",
      arguments: {
        url: `${inject("fixtureUrl")}/content/article`,
        format: "text",
        extract: { headline: "h1", cells: { selector: "td:first-child", all: true } },
      },
    })) as CallToolResult;
    expect(scraped.structuredContent).toMatchObject({ data: { headline: "The headline", cells: ["alpha", "beta"] } });
    const without = (await keyed.callTool({ name: "scrape", arguments: { url: `${inject("fixtureUrl")}/content/article` } })) as CallToolResult;
    expect(without.isError).toBe(true);
    expect(JSON.stringify(without.structuredContent)).toMatch(/extract: is required/);
    expect(await balance()).toBe(before - 2 * PRICES.content);
  });

  it("map_site: the site's URLs one a line for the model, the whole answer structured, charged $0.001", async () => {
    const before = await balance();
    const site = inject("crawlSites").a;
    const result = (await keyed.callTool({ name: "map_site", arguments: { url: `${site}/`, limit: 3 } })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(ofType(result, "text")[0]!.text).toBe([`${site}/`, `${site}/articles/1-1`, `${site}/articles/1-2`].join("\n"));
    expect(result.structuredContent).toMatchObject({
      robots: { found: true, crawlDelay: 0 },
      urls: [{ source: "start" }, { source: "sitemap" }, { source: "sitemap" }],
    });
    expect(await balance()).toBe(before - PRICES.map);
  });

  it("crawl_site answers at once with the crawl; get_crawl reads it until it ends, its pages charged as they were delivered", async () => {
    const before = await balance();
    const site = inject("crawlSites").b;
    const started = (await keyed.callTool({
      name: "crawl_site",
      arguments: { url: `${site}/`, limit: 2, render: "never", headers: { "x-crawl-run": `mcp-${Date.now()}` } },
    })) as CallToolResult;
    expect(started.isError, JSON.stringify(started.content)).toBeFalsy();
    const { id } = started.structuredContent as { id: string };
    expect(started.structuredContent).toMatchObject({ status: "running", limit: 2 });
    let crawl: { status: string; charged_micro_usd: number; pages: { status: string }[] };
    const until = Date.now() + 60_000;
    do {
      await new Promise((resolve) => setTimeout(resolve, 500));
      crawl = (await keyed.callTool({ name: "get_crawl", arguments: { crawlId: id } })).structuredContent as typeof crawl;
    } while (crawl.status === "running" && Date.now() < until);
    expect(crawl.status).toBe("completed");
    expect(crawl.pages.filter((p) => p.status === "delivered")).toHaveLength(2);
    expect(crawl.charged_micro_usd).toBe(2 * PRICES.crawlPage);
    expect(await balance()).toBe(before - 2 * PRICES.crawlPage);
    const unknown = (await keyed.callTool({ name: "get_crawl", arguments: { crawlId: "crl_AAAAAAAAAAAAAAAAAAAAAA" } })) as CallToolResult;
    expect(unknown.isError).toBe(true);
  });

  it("screenshot: a JPEG preview at most 1024 px wide, a link to the full-resolution PNG, charged $0.005 like the REST call", async () => {
    const before = await balance();
    const result = (await keyed.callTool({ name: "screenshot", arguments: { url: fixture("/simple") } })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    const [image] = ofType(result, "image");
    expect(image!.mimeType).toBe("image/jpeg");
    const preview = await sharp(Buffer.from(image!.data, "base64")).metadata();
    expect([preview.format, preview.width, preview.height]).toEqual(["jpeg", 1024, 640]);
    const [link] = ofType(result, "resource_link");
    expect(link).toMatchObject({ mimeType: "image/png", name: "screenshot.png" });
    // On the service's own host, and fetched as a client that sends its key with every request would
    // (storage refuses a second kind of credentials): the redirect to storage leaves the key behind.
    expect(new URL(link!.uri).origin).toBe(new URL(base).origin);
    const full = await fetch(link!.uri, { headers: auth });
    expect(full.status).toBe(200);
    expect(full.redirected && new URL(full.url).origin).not.toBe(new URL(base).origin);
    const original = await sharp(Buffer.from(await full.arrayBuffer())).metadata();
    expect([original.format, original.width, original.height]).toEqual(["png", 2560, 1600]);
    expect(ofType(result, "text")[0]!.text).toContain(link!.uri);
    expect(result.structuredContent).toMatchObject({ format: "png", width: 2560, height: 1600, title: "Simple fixture", downloadUrl: link!.uri });
    expect(result._meta).toMatchObject({ "shotline/charged-micro-usd": PRICES.screenshot, "shotline/balance-micro-usd": before - PRICES.screenshot });
    expect(await balance()).toBe(before - PRICES.screenshot);
  });

  it("html_to_screenshot of a tall full page: the preview is the top 1536 px, said so; a mockup costs $0.01", async () => {
    const before = await balance();
    const html = '<body style="margin:0"><div style="height:5000px;background:linear-gradient(#00f,#0f0)"></div></body>';
    const result = (await keyed.callTool({
      name: "html_to_screenshot",
      arguments: { html, fullPage: true, width: 800, deviceScaleFactor: 1 },
    })) as CallToolResult;
    const preview = await sharp(Buffer.from(ofType(result, "image")[0]!.data, "base64")).metadata();
    expect([preview.width, preview.height]).toEqual([800, 1536]);
    expect(ofType(result, "text")[0]!.text).toMatch(/the top of the page/);
    expect(result.structuredContent).toMatchObject({ width: 800, height: 5000 });
    const mockup = (await keyed.callTool({
      name: "html_to_screenshot",
      arguments: { html: "<h1>Hi</h1>", style: "mockup", deviceScaleFactor: 1 },
    })) as CallToolResult;
    expect(mockup._meta?.["shotline/charged-micro-usd"]).toBe(PRICES.mockup);
    expect(await balance()).toBe(before - PRICES.screenshot - PRICES.mockup);
  });

  it("an output link that names nothing stored, or anything but an output, is a 404 in our error shape", async () => {
    const day = new Date().toISOString().slice(0, 10);
    for (const path of [
      `/api/v1/outputs/${day}/00000000-0000-4000-8000-000000000000.png`,
      `/api/v1/outputs/${day}/..%2F..%2Fanswers%2Fx`,
      `/api/v1/outputs/${day}/not-a-uuid.png`,
      "/api/v1/outputs/cache/d1",
    ]) {
      const answer = await fetch(`${base}${path}`, { redirect: "manual" });
      expect(answer.status, path).toBe(404);
      expect(((await answer.json()) as { error: { code: string } }).error.code, path).toBe("NOT_FOUND");
    }
  });

  it("a PDF comes back as a link only", async () => {
    const result = (await keyed.callTool({ name: "html_to_screenshot", arguments: { html: "<h1>Invoice</h1>", format: "pdf" } })) as CallToolResult;
    expect(ofType(result, "image")).toEqual([]);
    const [link] = ofType(result, "resource_link");
    expect(link!.mimeType).toBe("application/pdf");
    expect(
      Buffer.from(await (await fetch(link!.uri)).arrayBuffer())
        .subarray(0, 5)
        .toString(),
    ).toBe("%PDF-");
  });

  it("metadata (free) and usage answer as their REST routes do", async () => {
    const before = await balance();
    const metadata = (await keyed.callTool({ name: "metadata", arguments: { url: fixture("/simple") } })) as CallToolResult;
    expect(metadata.structuredContent).toMatchObject({ title: "Simple fixture" });
    expect(JSON.parse((ofType(metadata, "text")[0] as { text: string }).text)).toEqual(metadata.structuredContent);
    const usage = (await keyed.callTool({ name: "usage", arguments: {} })) as CallToolResult;
    expect(usage.structuredContent).toMatchObject({ balance_micro_usd: before });
    expect(await balance()).toBe(before);
  });

  it("free calls hold at most their share of the MCP function: when every place is held, metadata is 429 and paid renders still run", async () => {
    const slots = Array.from({ length: FREE_CALLS.size }, (_, i) => String(i));
    const hold = (leaseUntil: number) => Promise.all(slots.map((sk) => putItem({ pk: `SLOT#${FREE_CALLS.pool}`, sk, holder: "another-request", leaseUntil })));
    await hold(Date.now() + 60_000);
    const refused = (await keyed.callTool({ name: "metadata", arguments: { url: fixture("/simple") } })) as CallToolResult;
    expect(refused.isError).toBe(true);
    expect((refused.structuredContent as { error: { code: string } }).error.code).toBe("RATE_LIMITED");
    const paid = (await keyed.callTool({ name: "screenshot", arguments: { url: fixture("/simple"), deviceScaleFactor: 1 } })) as CallToolResult;
    expect(paid.isError).toBeFalsy();
    // The REST route has its own pool.
    const rest = await fetch(`${base}/api/v1/metadata`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ url: fixture("/simple") }),
    });
    expect(rest.status).toBe(200);
    // A holder that never let go (its instance crashed) frees its place when its lease ends; a call gives its own back.
    await hold(Date.now() - 1);
    const served = (await keyed.callTool({ name: "metadata", arguments: { url: fixture("/simple") } })) as CallToolResult;
    expect(served.structuredContent).toMatchObject({ title: "Simple fixture" });
    const items = await Promise.all(slots.map((sk) => getItem(`SLOT#${FREE_CALLS.pool}`, sk)));
    expect(items.filter((item) => item?.holder === "another-request")).toHaveLength(FREE_CALLS.size - 1);
    expect(items.filter((item) => item?.holder === undefined)).toHaveLength(1);
  });

  it(`one caller holds at most ${FREE_CALLS.perCaller} of those places: past them its free calls are 429, another caller's are served`, async () => {
    const mine = `SLOT#${FREE_CALLS.pool}:acct:${accountId}`;
    await Promise.all(
      Array.from({ length: FREE_CALLS.perCaller }, (_, i) => putItem({ pk: mine, sk: String(i), holder: "a-slow-call", leaseUntil: Date.now() + 60_000 })),
    );
    const refused = (await keyed.callTool({ name: "metadata", arguments: { url: fixture("/simple") } })) as CallToolResult;
    expect((refused.structuredContent as { error: { code: string } }).error.code).toBe("RATE_LIMITED");
    const other = (await anonymous.callTool({ name: "metadata", arguments: { url: fixture("/simple") } })) as CallToolResult;
    expect(other.structuredContent).toMatchObject({ title: "Simple fixture" });
    await Promise.all(
      Array.from({ length: FREE_CALLS.perCaller }, (_, i) => putItem({ pk: mine, sk: String(i), holder: "a-slow-call", leaseUntil: Date.now() - 1 })),
    );
    const served = (await keyed.callTool({ name: "metadata", arguments: { url: fixture("/simple") } })) as CallToolResult;
    expect(served.structuredContent).toMatchObject({ title: "Simple fixture" });
  });

  it("bad arguments get the REST error body as an error result, and cost nothing; an unknown tool is a JSON-RPC error", async () => {
    const before = await balance();
    for (const [name, args, code] of [
      ["screenshot", { url: "ftp://example.com" }, "INVALID_PARAMS"],
      ["screenshot", { url: fixture("/simple"), width: 10 }, "INVALID_PARAMS"],
      ["html_to_screenshot", {}, "INVALID_PARAMS"],
      ["screenshot", { url: fixture("/not-found") }, "INVALID_URL"],
      ["screenshot", { url: "http://169.254.169.254/latest/meta-data/" }, "INVALID_URL"],
    ] as const) {
      const result = (await keyed.callTool({ name, arguments: args })) as CallToolResult;
      expect(result.isError, JSON.stringify(args)).toBe(true);
      expect((result.structuredContent as { error: { code: string } }).error.code, JSON.stringify(args)).toBe(code);
    }
    await expect(keyed.callTool({ name: "screenshots", arguments: {} })).rejects.toThrow(/Unknown tool "screenshots"/);
    expect(await balance()).toBe(before);
  });

  it("usage without a key: 401's error as an error result", async () => {
    const result = (await anonymous.callTool({ name: "usage", arguments: {} })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect((result.structuredContent as { error: { code: string } }).error.code).toBe("UNAUTHORIZED");
  });
});

describe("tools/call paid with x402 (the x402 MCP transport)", () => {
  const { client: payer, payer: account, chain, usdc } = localPayer(inject("devInfo"));

  it("without payment: an error result carrying PaymentRequired (structured and as text) with the MCP tool's bazaar discovery; nothing runs", async () => {
    const result = (await anonymous.callTool({ name: "screenshot", arguments: { url: fixture("/simple") } })) as CallToolResult;
    const required = paymentRequiredOf(result)!;
    expect(required).toMatchObject({ x402Version: 2, accepts: [{ scheme: "exact", amount: String(PRICES.screenshot), payTo: inject("devInfo").payTo }] });
    expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(result.structuredContent);
    expect(required.extensions.bazaar.info.input).toMatchObject({ type: "mcp", toolName: "screenshot", transport: "streamable-http" });
    expect(validateDiscoveryExtension(required.extensions.bazaar)).toEqual({ valid: true });
    const mockup = paymentRequiredOf(
      (await anonymous.callTool({ name: "html_to_screenshot", arguments: { html: "<p>x</p>", style: "mockup" } })) as CallToolResult,
    );
    expect(mockup!.accepts[0].amount).toBe(String(PRICES.mockup));
  });

  it("a paying client pays a screenshot: the image, the settlement in _meta, and exactly its price moves on chain; the same payment again is refused", async () => {
    const payments: unknown[] = [];
    const result = await callPaying(
      anonymous,
      payer,
      { name: "screenshot", arguments: { url: fixture("/simple"), width: 400, deviceScaleFactor: 1 } },
      payments,
    );
    expect(result.isError).toBeFalsy();
    expect(ofType(result, "image")).toHaveLength(1);
    expect(result._meta?.["x402/payment-response"]).toMatchObject({ success: true, payer: account.address, network: inject("devInfo").network });
    // Exactly one USDC transfer of its price, payer to pay-to, in the settlement's transaction (read from the
    // chain: other files pay from the same payer at the same time, so balances are not this test's to compare).
    const { transaction } = result._meta!["x402/payment-response"] as { transaction: `0x${string}` };
    const transfers = parseEventLogs({ abi: erc20Abi, eventName: "Transfer", logs: (await chain.getTransactionReceipt({ hash: transaction })).logs });
    expect(transfers.map((t) => [t.args.from, t.args.to, t.args.value])).toEqual([[account.address, inject("devInfo").payTo, BigInt(PRICES.screenshot)]]);
    const settlements = await getItem(`SETTLE#${transaction}`, "SETTLE");
    expect(settlements).toMatchObject({ amount: PRICES.screenshot });
    const again = (await anonymous.callTool({
      name: "screenshot",
      arguments: { url: fixture("/simple"), width: 400, deviceScaleFactor: 1 },
      _meta: { "x402/payment": payments[0] },
    })) as CallToolResult;
    // The requirements again, with why this payment was refused (the facilitator's reason).
    expect(paymentRequiredOf(again)?.error).toMatch(/^invalid_/);
    expect(again._meta?.["x402/payment-response"]).toBeUndefined();
  });

  it("a render that fails is not settled: an error result, nothing moves", async () => {
    const payments: { payload: { authorization: { nonce: `0x${string}` } } }[] = [];
    const result = await callPaying(anonymous, payer, { name: "screenshot", arguments: { url: fixture("/not-found") } }, payments);
    expect(result.isError).toBe(true);
    expect((result.structuredContent as { error: { code: string } }).error.code).toBe("INVALID_URL");
    expect(result._meta?.["x402/payment-response"]).toBeUndefined();
    // The authorisation was never used on chain.
    const used = await chain.readContract({
      address: usdc,
      abi: [
        {
          type: "function",
          name: "authorizationState",
          stateMutability: "view",
          inputs: [{ type: "address" }, { type: "bytes32" }],
          outputs: [{ type: "bool" }],
        },
      ],
      functionName: "authorizationState",
      args: [account.address, payments[0]!.payload.authorization.nonce],
    });
    expect(used).toBe(false);
  });

  it("a payment that is not x402 at all: the requirements again, with the reason", async () => {
    const result = (await anonymous.callTool({
      name: "screenshot",
      arguments: { url: fixture("/simple") },
      _meta: { "x402/payment": "hello" },
    })) as CallToolResult;
    expect(paymentRequiredOf(result)?.error).toMatch(/not base64-encoded x402 JSON|x402Version/);
  });
});

describe("the HTTP endpoint", () => {
  const post = (headers: Record<string, string>, body: unknown) =>
    fetch(`${base}/mcp`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  const list = { jsonrpc: "2.0", id: 1, method: "tools/list" };
  const accept = { accept: "application/json, text/event-stream" };

  it("is stateless JSON: no session id, GET (no SSE stream) is 405", async () => {
    const res = await post(accept, list);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.headers.get("mcp-session-id")).toBeNull();
    expect(((await res.json()) as { result: { tools: unknown[] } }).result.tools).toHaveLength(14);
    const get = await fetch(`${base}/mcp`, { headers: accept });
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST");
  });

  it("refuses a page elsewhere (Origin), a client that cannot take JSON, and bodies that are not JSON-RPC; all as JSON", async () => {
    expect((await post({ ...accept, origin: "http://evil.example" }, list)).status).toBe(403);
    expect((await post({ ...accept, origin: base }, list)).status).toBe(200);
    expect((await post({ accept: "text/html" }, list)).status).toBe(406);
    const notRpc = await post(accept, { hello: "world" });
    expect(notRpc.status).toBe(400);
    expect(((await notRpc.json()) as { error: unknown }).error).toBeDefined();
    const array = await post(accept, [list]);
    expect(array.status).toBe(400);
    const garbage = await fetch(`${base}/mcp`, { method: "POST", headers: { "content-type": "application/json", ...accept }, body: "{not json" });
    expect(garbage.status).toBe(400);
  });

  it("refuses a rebound name (a page whose own host now points here): Host and Origin must be one the service answers on", async () => {
    const { request } = await import("node:http");
    const port = new URL(base).port;
    const send = (host: string, origin?: string) =>
      new Promise<number>((resolve, reject) => {
        const body = JSON.stringify(list);
        const req = request(
          `${base}/mcp`,
          {
            method: "POST",
            headers: { host, ...(origin ? { origin } : {}), "content-type": "application/json", ...accept, "content-length": Buffer.byteLength(body) },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode!);
          },
        );
        req.on("error", reject);
        req.end(body);
      });
    // What a DNS-rebinding page sends: its own name in Host, and as Origin.
    expect(await send(`evil.example:${port}`, `http://evil.example:${port}`)).toBe(403);
    expect(await send(`evil.example:${port}`)).toBe(403);
    expect(await send(`localhost:${port}`, `http://localhost:${port}`)).toBe(200);
    expect(await send(`127.0.0.1:${port}`)).toBe(200);
  });

  it("a tools/call whose arguments are not an object, or that names no tool: a JSON-RPC error, no render", async () => {
    for (const params of [{ name: "screenshot", arguments: "https://example.com" }, { arguments: {} }, { name: ["screenshot"] }]) {
      const res = await post(accept, { jsonrpc: "2.0", id: 7, method: "tools/call", params });
      const body = (await res.json()) as { id: number; error?: { code: number; message: string } };
      // The SDK's answer: -32602 (invalid params) or, for a request its schema refuses, -32603.
      expect([-32602, -32603], JSON.stringify(params)).toContain(body.error?.code);
      expect(body.error?.message, JSON.stringify(params)).toMatch(/invalid|expected/i);
      expect(body.id).toBe(7);
    }
  });
});

describe("npm run mcp (the stdio entry)", () => {
  it("forwards a desktop agent's calls to the service with its key: list, render, charge", async () => {
    const before = await balance();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ["--import", "tsx", resolve("dev/mcp-stdio.ts")],
      env: { ...(process.env as Record<string, string>), SHOTLINE_URL: base, SHOTLINE_API_KEY: key },
      stderr: "pipe",
    });
    const client = new Client({ name: "desktop-agent", version: "1.0.0" });
    await client.connect(transport);
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toContain("screenshot");
      const result = (await client.callTool({ name: "html_to_screenshot", arguments: { html: "<h1>stdio</h1>", width: 400, height: 200 } })) as CallToolResult;
      expect(ofType(result, "image")).toHaveLength(1);
      expect(await balance()).toBe(before - PRICES.screenshot);
    } finally {
      await client.close();
    }
  });

  it("a service that is not there: the call fails with a JSON-RPC error naming it, not a hang", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ["--import", "tsx", resolve("dev/mcp-stdio.ts")],
      env: { ...(process.env as Record<string, string>), SHOTLINE_URL: `http://127.0.0.1:${inject("closedPort")}` },
      stderr: "pipe",
    });
    const client = new Client({ name: "desktop-agent", version: "1.0.0" });
    await expect(client.connect(transport)).rejects.toThrow(/Shotline at http:\/\/127\.0\.0\.1/);
    await client.close();
  });
});
