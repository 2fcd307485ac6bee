// The fonts that ship with the service (lib/render/packaging/fonts.ts), tried as a person would look
// at them: real running text in every writing system we promise, through HTTP, decoded and read for
// ink; generic families and core web fonts by their metrics; Han by the page's language.
import { describe, expect, it } from "vitest";
import { writingSystems } from "../../dev/harness/writing-systems.js";
import { decode, postJson } from "../helpers/api.js";
import { inkBand, textProblems, textRowsHtml } from "../helpers/ink.js";

const shootHtml = (body: Record<string, unknown>) => postJson("/api/v1/html-to-screenshot", body);
// html-to-screenshot's narrowest viewport.
const MIN_WIDTH = 320;

const ROW = 100;
const PX = 32;

/** One row per line, each in its language and direction, at 32 px in the page's default font (or `font`). */
async function renderRows(rows: readonly { lang: string; dir: string; text: string; font?: string }[], width = 1600) {
  const image = await decode(await shootHtml({ html: textRowsHtml(rows, ROW, PX), width, height: rows.length * ROW, deviceScaleFactor: 1 }));
  return rows.map((_, i) => inkBand(image, i * ROW, (i + 1) * ROW));
}

/** Renders `html` and answers the page's title, which its script sets to what it measured. */
async function measure<T>(body: string): Promise<T> {
  const res = await shootHtml({ html: `<body style="margin:0">${body}</body>`, width: 1200, height: 400, deviceScaleFactor: 1, responseFormat: "json" });
  expect(res.status).toBe(200);
  return JSON.parse(((await res.json()) as { title: string }).title) as T;
}

/** The layout width of each element matching `selector`, in CSS px, as the page's title. */
const widthsScript = (selector: string) =>
  `<script>document.title = JSON.stringify([...document.querySelectorAll(${JSON.stringify(selector)})].map((e) => e.getBoundingClientRect().width));</script>`;

describe("writing systems", () => {
  const systems = writingSystems(60);

  it("draws a line of real running text in every writing system we ship, with many glyph shapes and no blank run", async () => {
    // A control that must fail every check: characters no shipped font has (a private-use run).
    const rows = [
      ...systems,
      { name: "control: no font", lang: "en", dir: "ltr", text: "\uE000\uE001\uE002\uE003\uE004\uE005\uE006\uE007\uE008\uE009 \uE00A\uE00B\uE00C" },
    ];
    const bands = await renderRows(rows);
    const failures: string[] = [];
    bands.forEach((band, i) => {
      const { name, text } = rows[i]!;
      const chars = [...text].length;
      const problems = textProblems(band, chars, PX);
      if (problems.length) failures.push(`${name} (${chars} chars): ${problems.join(", ")}`);
    });
    // Every writing system passes; the control fails (the checks can see a missing font).
    expect(failures).toEqual([expect.stringMatching(/^control: no font/)]);
  });

  it("shapes Arabic: joined letters take less room than the same letters kept apart", async () => {
    const arabic = systems.find((s) => s.lang === "ar")!;
    const word = arabic.text.split(" ").find((w) => [...w].length >= 5)!;
    const apart = [...word].join("\u200C");
    const [joined, isolated] = await renderRows([
      { lang: "ar", dir: "rtl", text: word },
      { lang: "ar", dir: "rtl", text: apart },
    ]);
    expect(joined!.ink).toBeGreaterThan(200);
    expect(joined!.right - joined!.left).toBeLessThan(0.9 * (isolated!.right - isolated!.left));
    // Joined letters touch: fewer separate pieces than letters.
    expect(joined!.pieces).toBeLessThan(isolated!.pieces);
  });

  it("draws Han in the forms of the page's language: ja, zh-CN, zh-TW and ko each get their own", async () => {
    // 直 differs between the Japanese (and Korean) and the Chinese forms, 骨 between Simplified and the others.
    const han = async (lang: string) => {
      const html = `<html lang="${lang}"><body style="margin:0;background:#fff"><div style="font-size:96px;line-height:1">直骨</div></body></html>`;
      const image = await decode(await shootHtml({ html, width: MIN_WIDTH, height: 120, deviceScaleFactor: 1 }));
      return image.bitmap.data.toString("base64");
    };
    const [ja, cn, tw, ko] = await Promise.all(["ja", "zh-CN", "zh-TW", "ko"].map(han));
    expect(ja).not.toBe(cn);
    expect(tw).not.toBe(cn);
    expect(tw).not.toBe(ja);
    expect(ko).not.toBe(cn);
    // A page that names no language gets the Simplified forms, as before.
    expect(await han("en")).toBe(cn);
  });

  it("draws Han by each element's language on a page that mixes them, whichever comes first", async () => {
    // One row per language (96 px glyphs in 100 px rows) on an English page; each row cut out by its place.
    const rowsOf = async (langs: readonly string[]) => {
      const html = `<html lang="en"><body style="margin:0;background:#fff">${langs.map((lang) => `<div style="font-size:96px;line-height:100px;height:100px"><span lang="${lang}">骨直角</span></div>`).join("")}</body></html>`;
      const image = await decode(await shootHtml({ html, width: MIN_WIDTH, height: 100 * langs.length, deviceScaleFactor: 1 }));
      const { data, width } = image.bitmap;
      return Object.fromEntries(langs.map((lang, i) => [lang, data.subarray(i * 100 * width * 4, (i + 1) * 100 * width * 4).toString("base64")]));
    };
    const langs = ["ja", "zh-CN", "zh-TW", "ko"];
    const forward = await rowsOf(langs);
    const backward = await rowsOf([...langs].reverse());
    expect(forward.ja).not.toBe(forward["zh-CN"]);
    expect(forward["zh-TW"]).not.toBe(forward["zh-CN"]);
    expect(forward["zh-TW"]).not.toBe(forward.ja);
    expect(forward.ko).not.toBe(forward["zh-CN"]);
    // The order on the page changes nothing: the first drawn no longer decides for the others.
    for (const lang of langs) expect(backward[lang], lang).toBe(forward[lang]);
  });
});

describe("font families", () => {
  it("keeps monospace columns: in monospace, <pre>, <code>, <kbd> and Courier New, 20 i are as wide as 20 W (Courier's 0.6 em)", async () => {
    const i = "i".repeat(20);
    const w = "W".repeat(20);
    const spans = [
      `<span style="font-family:monospace">${i}</span><br><span style="font-family:monospace">${w}</span>`,
      `<pre style="display:inline">${i}</pre><br><pre style="display:inline">${w}</pre>`,
      `<code>${i}</code><br><code>${w}</code>`,
      `<kbd>${i}</kbd><br><kbd>${w}</kbd>`,
      `<span style="font-family:'Courier New'">${i}</span><br><span style="font-family:Courier">${w}</span>`,
    ];
    const html = `<div style="font-size:32px">${spans.map((s) => `<p>${s}</p>`).join("")}</div>${widthsScript("span, pre, code, kbd")}`;
    const widths = await measure<number[]>(html);
    expect(widths).toHaveLength(10);
    for (let k = 0; k < widths.length; k += 2) expect(widths[k], `pair ${k / 2}`).toBeCloseTo(widths[k + 1]!, 1);
    // Courier New's advance is 0.6 em (1229/2048), 19 px at 32 px (Chromium on Linux lays glyphs out on whole pixels).
    const courier = widths.slice(8);
    for (const width of courier) expect(width).toBe(20 * Math.round(32 * (1229 / 2048)));
  });

  it("sizes Arial- and Helvetica-named text with Arial's metrics, so it wraps where the designer saw it wrap", async () => {
    // Arial's advances (Helvetica's, per 1,000 em): a line of them at 32 px.
    const advances: Record<string, number> = {
      H: 722,
      a: 556,
      m: 833,
      b: 556,
      u: 556,
      r: 333,
      g: 556,
      e: 556,
      f: 278,
      o: 556,
      n: 556,
      s: 500,
      t: 278,
      i: 222,
      v: 500,
      " ": 278,
    };
    const text = "Hamburgefonstiv strive on bringing a mere bottom ";
    // Each advance on whole pixels, as Chromium on Linux lays glyphs out.
    const expected = [...text].reduce((sum, c) => sum + Math.round((advances[c]! * 32) / 1000), 0);
    const widths = await measure<number[]>(
      ["Arial", "Helvetica", "sans-serif"].map((f) => `<span style="font:32px ${f};white-space:pre">${text}</span><br>`).join("") + widthsScript("span"),
    );
    for (const width of widths) expect(width).toBe(expected);
  });

  it("draws serif as a serif (Times New Roman's substitute), and the core web fonts each with a font of their own", async () => {
    const text = "Hamburgefonstiv quick brown fox";
    const families = ["serif", "'Times New Roman'", "sans-serif", "Georgia", "Verdana", "'Open Sans'"];
    const widths = await measure<number[]>(
      families.map((f) => `<span style="font:32px ${f};white-space:pre">${text}</span><br>`).join("") + widthsScript("span"),
    );
    const [serif, times, sans, georgia, verdana, openSans] = widths as [number, number, number, number, number, number];
    expect(serif).toBeCloseTo(times, 1);
    // Each resolves to a different font, none of them the fallback (Open Sans).
    const distinct = new Set([serif, sans, georgia, verdana, openSans].map((w) => Math.round(w)));
    expect(distinct.size).toBe(5);
    // And the pixels differ too: serif does not draw like sans-serif.
    const [serifInk, sansInk] = await renderRows([
      { lang: "en", dir: "ltr", text: "Hamburgefonstiv", font: "serif" },
      { lang: "en", dir: "ltr", text: "Hamburgefonstiv", font: "sans-serif" },
    ]);
    expect(serifInk).not.toEqual(sansInk);
  });
});
