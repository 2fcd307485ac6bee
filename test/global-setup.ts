import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { type CrawlSites, startCrawlSites } from "../dev/harness/crawl-site.js";
import { type DevProcess, fundedKey, startDev } from "../dev/harness/dev-process.js";
import { type Fixtures, startFixtures } from "../dev/harness/fixtures.js";
import { ensurePortFree } from "../dev/ports.js";
import { type S3Local, startS3Local } from "../dev/s3-local.js";

declare module "vitest" {
  export interface ProvidedContext {
    baseUrl: string;
    devInfo: import("../dev/stack.js").DevInfo;
    devPid: number;
    fixtureUrl: string;
    canaryUrl: string;
    canaryPort: number;
    closedPort: number;
    apiKey: string;
    localDir: string;
    accountEmail: string;
    /** An S3 of "the customer's" (another s3rver), that job items upload to through presigned URLs. */
    customerS3: string;
    /** The crawler's two loopback sites (dev/harness/crawl-site.ts). */
    crawlSites: { a: string; b: string };
    /** The customer's proxies on loopback (dev/harness/proxies.ts). */
    proxyPorts: { http: number; socks: number; silent: number };
  }
}

/** The page-load limit of the test stack: short, so the timeout tests take seconds, not half a minute. */
export const TEST_PAGE_LOAD_MS = 5_000;

type Shared = { dev: DevProcess; fixtures: Fixtures; sites: CrawlSites; closedPort: number; apiKey: string; accountEmail: string; customerS3: S3Local };

// The integration, infra, e2e, hostile and final projects each list this file; the stack starts
// once for whichever of them run and stops after the last of them (vitest sets every project up
// before the first test and tears them down after the last). Vitest loads this module once per
// project, so the shared state lives on globalThis, not in module variables.
const holder = globalThis as { __shotlineStack?: { shared?: Promise<Shared>; users: number } };
holder.__shotlineStack ??= { users: 0 };
const state = holder.__shotlineStack;

export async function setup(project: TestProject) {
  state.users++;
  state.shared ??= startShared();
  const { dev, fixtures, sites, closedPort, apiKey, accountEmail, customerS3 } = await state.shared;
  project.provide("crawlSites", { a: sites.a, b: sites.b });
  project.provide("customerS3", customerS3.endpoint);
  project.provide("apiKey", apiKey);
  project.provide("localDir", dev.localDir);
  project.provide("accountEmail", accountEmail);
  project.provide("baseUrl", dev.info.baseUrl);
  project.provide("devInfo", dev.info);
  project.provide("devPid", dev.child.pid!);
  project.provide("fixtureUrl", fixtures.baseUrl);
  project.provide("canaryUrl", fixtures.canaryUrl);
  project.provide("canaryPort", fixtures.canaryPort);
  project.provide("closedPort", closedPort);
  project.provide("proxyPorts", { http: fixtures.proxies.http, socks: fixtures.proxies.socks, silent: fixtures.proxies.silent });
}

export async function teardown() {
  if (--state.users > 0 || !state.shared) return;
  const { dev, fixtures, sites, customerS3 } = await state.shared;
  state.shared = undefined;
  await dev.stop();
  await fixtures.close();
  await sites.close();
  await customerS3.stop();
}

// One local stack (`npm run dev` with its state in a temp folder), plus the fixture pages it may
// render (allowed through the network guard) and the canary it must not reach.
async function startShared(): Promise<Shared> {
  const fixtures = await startFixtures();
  // Allowed through the guard but with nothing listening: a real "connection refused".
  const closedPort = await portNothingTakes();
  const sites = await startCrawlSites(fixtures.canaryUrl);
  const customerS3 = await startS3Local({ directory: await mkdtemp(path.join(tmpdir(), "shotline-customer-s3-")) });
  const dev = await startDev({
    // localhost:<fixtures port> is the same server as another origin (request controls' third party).
    ALLOWED_PRIVATE_HOSTS: [
      new URL(fixtures.baseUrl).host,
      `localhost:${new URL(fixtures.baseUrl).port}`,
      `127.0.0.1:${closedPort}`,
      new URL(sites.a).host,
      new URL(sites.b).host,
      new URL(customerS3.endpoint).host,
      // The customer's proxies (test/integration/proxy.test.ts).
      ...[fixtures.proxies.http, fixtures.proxies.socks, fixtures.proxies.silent].map((port) => `127.0.0.1:${port}`),
    ].join(","),
    PAGE_LOAD_TIMEOUT_MS: String(TEST_PAGE_LOAD_MS),
    // Many test files share 127.0.0.1; per-account limits are tested with an account set to 10/s.
    RATE_LIMIT_PER_SECOND: "100",
    SIGNUP_LIMIT_PER_HOUR: "1000",
    // The fuzzer alone sends hundreds of wrong keys from 127.0.0.1; the limit is tested per IP in process.
    AUTH_FAILURES_PER_MINUTE: "100000",
    // Job webhooks retried at a thousandth of their schedule: the retry tests take seconds.
    WEBHOOK_BACKOFF_SCALE: "0.001",
    // Everything it logs, for test/final/logs.test.ts to search for secrets.
    LOG_LEVEL: "debug",
  });
  // An account for the render tests: plenty of credit and no practical rate limit, set through the
  // operators' CLI (which is thereby tested too).
  const accountEmail = "render-tests@shotline.test";
  const apiKey = await fundedKey(dev.info.baseUrl, dev.localDir, accountEmail, 1000);
  return { dev, fixtures, sites, closedPort, apiKey, accountEmail, customerS3 };
}

/**
 * A port on 127.0.0.1 that nothing listens on now and nothing in the suite will take later. A port
 * the OS picked once (listen(0)) goes back to its ephemeral pool, where every later fixture, proxy
 * and client socket draws from: a CI run once got a page-load timeout there instead of "refused",
 * as when a server took the port (a slowloris fixture was running). So it comes from below the
 * ephemeral range, which only explicit binds reach, and none of ours does.
 */
async function portNothingTakes(): Promise<number> {
  const range = await readFile("/proc/sys/net/ipv4/ip_local_port_range", "utf8").catch(() => "32768");
  const ephemeralFloor = Number(range.trim().split(/\s+/)[0]) || 32768;
  const low = Math.max(1024, ephemeralFloor - 10_000);
  const free = (port: number) =>
    ensurePortFree(port, "").then(
      () => true,
      () => false,
    );
  for (let attempt = 0; attempt < 50 && low < ephemeralFloor; attempt++) {
    const port = low + Math.floor(Math.random() * (ephemeralFloor - low));
    if (await free(port)) return port;
  }
  throw new Error(`no free port on 127.0.0.1 below the ephemeral range (which starts at ${ephemeralFloor})`);
}
