// Runs after every other project (vitest.config.ts: groupOrder 2): the shared stack logged the whole
// suite at debug level (test/global-setup.ts), with every key, signed link, cookie, password and
// page URL with a query string the tests sent. None of it is in the log.
import { readFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { expect, inject, it } from "vitest";
import { postJson } from "../helpers/api.js";

const logLines = () =>
  readFileSync(path.join(inject("localDir"), "dev.log"), "utf8")
    .split("\n")
    .filter((line) => line.startsWith("{"));

it("the log of the whole suite carries no key, secret, signature, cookie, password or query string", async () => {
  // One more line that would carry a query: metadata failing to read a manifest at a URL with a token.
  const res = await postJson("/api/v1/metadata", { url: `${inject("fixtureUrl")}/manifest-gone?session=s3cret#frag` });
  expect(res.status).toBe(200);
  for (let waited = 0; !logLines().some((line) => line.includes("manifest not used")) && waited < 10_000; waited += 100) await sleep(100);
  const lines = logLines();
  expect(lines.some((line) => line.includes("manifest not used") && line.includes("/not-found"))).toBe(true);
  const found = (pattern: RegExp) => lines.filter((line) => pattern.test(line)).slice(0, 3);
  expect(found(/shl_live_[A-Za-z0-9_-]{43}/), "an API key").toEqual([]);
  expect(found(/sks_[A-Za-z0-9_-]{20,}/), "a signing secret").toEqual([]);
  expect(found(/whsec_[A-Za-z0-9+/=]{20,}/), "a webhook secret").toEqual([]);
  expect(found(/outputs\/\d{4}-\d{2}-\d{2}\/[0-9a-f-]{36}/), "a stored output's name").toEqual([]);
  expect(found(/signature=[0-9a-f]{16}/), "a link's signature").toEqual([]);
  expect(found(/Bearer\s+\S/i), "an Authorization header").toEqual([]);
  expect(found(/(?:https?|wss?):\/\/[^\s"'\\]*\?[^\s"'\\]/i), "a URL with its query").toEqual([]);
  // Values the tests send as cookies and HTTP credentials (test/integration/controls.test.ts).
  expect(found(/abc123|s3cret/), "a cookie's or a password's value").toEqual([]);
  // The logs' and the proxies' secrets (test/integration/page-logs.test.ts, proxy.test.ts).
  expect(found(/SECRETCOOKIE123|SECRETHEADER456|SECRETPASS789/), "a value the page logs redact").toEqual([]);
  expect(found(/proxy-secret-42|wrong-proxy-password/), "a proxy's password").toEqual([]);
  expect(found(/\b(?:https?|wss?|socks5h?):\/\/[^\s"'\\/@]*:[^\s"'\\/@]*@/i), "a URL's user-info").toEqual([]);
  // A monitor's secrets (test/integration/monitors.test.ts), and the MCP's (mcp.test.ts).
  expect(found(/MONCOOKIE123|MONHEADER456|MONPASS789|MCPCOOKIE42|MCPPASS99/), "a monitor's secret").toEqual([]);
  // Secrets sealed at rest (test/integration/secrets-at-rest.test.ts).
  expect(found(/JOBCOOKIE314|JOBHEADER159|JOBPASS265|JOBCANCEL777|MONSEAL[A-Z]+\d\d|MONLEGACY[A-Z]+\d\d/), "a job item's or a monitor's sealed secret").toEqual(
    [],
  );
});
