// Real pages from a public corpus (Zyte's article extraction benchmark, bench/corpus/), served on
// loopback with their third parties unreachable (dev/harness/real-pages.ts): most refused at once,
// a few hosts accepting and never answering. A page whose `load` never comes for such a script is
// captured at the page-load limit with its content and the incomplete header, not a 504, and read
// as content the same way; the others render as usual.
import { describe, expect, inject, it } from "vitest";
import { paintsButNeverLoads, realArticle, realPageIds } from "../../dev/harness/real-pages.js";
import { decode, postJson } from "../helpers/api.js";

const page = (id: string) => `${inject("fixtureUrl")}/real/${id}`;
const hanging = realPageIds().filter(paintsButNeverLoads).slice(0, 3);
const others = realPageIds()
  .filter((id) => !paintsButNeverLoads(id))
  .slice(0, 2);

/** The share of an image's pixels that differ from its commonest colour: what is drawn on the page's background. */
async function inkShare(res: Response): Promise<number> {
  const { data } = (await decode(res)).bitmap;
  const counts = new Map<number, number>();
  for (let i = 0; i < data.length; i += 4) {
    const key = (data[i]! << 16) | (data[i + 1]! << 8) | data[i + 2]!;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return 1 - Math.max(...counts.values()) / (data.length / 4);
}

describe("real pages with their third parties unreachable", () => {
  it("the corpus holds pages of both kinds", () => {
    expect(hanging).toHaveLength(3);
    expect(others).toHaveLength(2);
  });

  it.each(hanging)("%s: its load never comes; captured as it stands with its content, incomplete, charged", async (id) => {
    const res = await postJson("/api/v1/screenshot", { url: page(id), width: 1280, height: 800, deviceScaleFactor: 1 });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-capture-incomplete")).toBe("load-timeout");
    expect(res.headers.get("x-charged-micro-usd")).toBe("5000");
    expect(await inkShare(res)).toBeGreaterThan(0.005);
  });

  it.each(others)("%s: renders with its content", async (id) => {
    const res = await postJson("/api/v1/screenshot", { url: page(id), width: 1280, height: 800, deviceScaleFactor: 1 });
    expect(res.status).toBe(200);
    expect(await inkShare(res)).toBeGreaterThan(0.005);
  });

  it("content of a page whose load never comes is read as it stands (rendered: it has scripts), incomplete", async () => {
    const res = await postJson("/api/v1/content", { url: page(hanging[0]!), format: "text" });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-capture-incomplete")).toBe("load-timeout");
    const body = (await res.json()) as { text: string; rendered: boolean; incomplete?: string };
    expect(body).toMatchObject({ rendered: true, incomplete: "load-timeout" });
    // Its article, as the benchmark's ground truth has it, is in the text read.
    expect(body.text).toContain(realArticle(hanging[0]!).split("\n")[0]!.slice(0, 80));
  });
});
