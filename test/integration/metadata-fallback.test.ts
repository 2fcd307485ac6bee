// Metadata's browser fallback is kept short and few, in process (this worker's own browser) against
// the shared fixtures: a free endpoint must not hold the browser that paid renders need.
import { beforeAll, describe, expect, inject, it } from "vitest";
import type { Deadline } from "../../lib/deadline.js";
import { useSharedStackInProcess } from "../helpers/in-process.js";

let extractMetadata: typeof import("../../lib/metadata/extract.js").extractMetadata;

beforeAll(async () => {
  // A page-load limit longer than the fallback's budget, so that the budget is what ends it.
  useSharedStackInProcess({ ALLOWED_PRIVATE_HOSTS: new URL(inject("fixtureUrl")).host, PAGE_LOAD_TIMEOUT_MS: "30000" });
  ({ extractMetadata } = await import("../../lib/metadata/extract.js"));
  const { closeBrowser, warmUp } = await import("../../lib/render/browser.js");
  // The browser up first: its launch (fonts built, Chromium started) would hold this process for
  // seconds on a busy machine, and the three requests would reach the fallback that far apart.
  await warmUp();
  return () => closeBrowser();
});

const deadline = (): Deadline => ({ at: Date.now() + 28_000, signal: new AbortController().signal });

describe("metadata's browser fallback", () => {
  it("gets 10 s in all, and two run at once: a third waits for a slot, and without one while 4 s are left answers from the static HTML", async () => {
    const url = `${inject("fixtureUrl")}/shell-never-loads`;
    const started = Date.now();
    const outcomes = await Promise.all(
      [1, 2, 3].map((i) =>
        extractMetadata(`${url}?${i}`, deadline()).then(
          (metadata) => ({ metadata, ms: Date.now() - started }),
          (error: { status?: number; code?: string }) => ({ error, ms: Date.now() - started }),
        ),
      ),
    );
    const failed = outcomes.filter((outcome) => "error" in outcome);
    const answered = outcomes.filter((outcome) => "metadata" in outcome);
    // Two took the browser and ran out of their time (the page never loads); the third never got it.
    expect(failed.map((outcome) => ("error" in outcome ? `${outcome.error.status} ${outcome.error.code}` : ""))).toEqual([
      "504 RENDER_TIMEOUT",
      "504 RENDER_TIMEOUT",
    ]);
    expect(answered).toHaveLength(1);
    expect("metadata" in answered[0]! && answered[0].metadata.favicon).toBe(`${new URL(url).origin}/favicon.ico`);
    for (const outcome of outcomes) {
      expect(outcome.ms).toBeGreaterThan(5_000);
      expect(outcome.ms, "within the fallback's 10 s, not the page-load limit's 30").toBeLessThan(11_000);
    }
  }, 60_000);
});
